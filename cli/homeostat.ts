#!/usr/bin/env node
/**
 * The `homeostat` binary: {@link runCli} with the built-in operator as the default. A team's own
 * binary does the same with its operator (`runCli({ operator })` from `homeostat/runtime`).
 */
import { builtinOperator } from '../builtin';
import { runCli } from './run-cli';

runCli({ operator: builtinOperator }).catch((err: unknown) => {
  process.stderr.write(`homeostat: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
