#!/usr/bin/env node
/**
 * The `homeostat` binary: {@link runCli} with the built-in operator as the default. A team's own
 * binary does the same with its operator (`runCli({ operator })` from `homeostat/runtime`).
 * HOMEOSTAT_SYSTEM_NAMESPACE (default `homeostat-system`) is homeostat's own namespace: the built-in
 * `PostgresServer` reads its admin Secret there and nowhere else. This edge reads it, once.
 */
import { createBuiltinOperator, defaultSystemNamespace } from '../builtin';
import { runCli } from './run-cli';

const systemNamespace = process.env.HOMEOSTAT_SYSTEM_NAMESPACE || defaultSystemNamespace;
if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(systemNamespace)) {
  process.stderr.write(
    `homeostat: HOMEOSTAT_SYSTEM_NAMESPACE: ${JSON.stringify(systemNamespace)} is not a namespace name\n`,
  );
  process.exit(2);
}

runCli({ operator: createBuiltinOperator({ systemNamespace }) }).catch((err: unknown) => {
  process.stderr.write(`homeostat: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
