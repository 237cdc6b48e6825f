/**
 * The demo on the embedded local stack: starts the real control plane, shows that each server
 * answers, prints where to look and keeps running until Ctrl-C, which stops everything.
 * `--exit-when-ready` stops right after (used by tests and CI).
 */
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { Client as PgClient } from 'pg';
import { cleanupStaleStacks, startStack, stopStack } from '../devstack';

const say = (line: string): void => {
  process.stdout.write(`${line}\n`);
};

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'exit-when-ready': { type: 'boolean', default: false } } });
  await cleanupStaleStacks();
  await stopStack('demo'); // a demo left by a killed run
  const started = Date.now();
  const stack = await startStack({ name: 'demo', progress: (l) => say(`  ${l}`) });
  const e = stack.endpoints;
  say(`\nlocal stack ready in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  say('\nkube-apiserver answers (kubectl get namespaces):');
  say(execFileSync(stack.kubectl, ['--kubeconfig', e.kubeconfig, 'get', 'namespaces'], { encoding: 'utf8' }).trimEnd());
  const pg = new PgClient({ connectionString: e.postgresUrl });
  await pg.connect();
  const { rows } = await pg.query<{ v: string }>("SELECT current_setting('server_version') AS v");
  await pg.end();
  say(`\nPostgreSQL answers: server_version ${rows[0]?.v ?? '?'}`);
  say('\nwhere to look:');
  say(`  Temporal UI   ${e.temporalUiUrl}/namespaces/${e.temporalNamespace}/workflows`);
  say(`  Temporal gRPC ${e.temporalAddress} (namespace ${e.temporalNamespace})`);
  say(`  kubectl       kubectl --kubeconfig ${e.kubeconfig} get namespaces`);
  say(`  PostgreSQL    ${e.postgresUrl}`);
  say(`  env file      ${e.envFile}`);
  const stop = async (): Promise<void> => {
    say('\nstopping the local stack…');
    await stack.stop();
    say('stopped');
    process.exit(0);
  };
  if (values['exit-when-ready']) return stop();
  say('\nrunning; press Ctrl-C to stop everything');
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
  setInterval(() => {}, 1 << 30);
}

main().catch((err: unknown) => {
  process.stderr.write(`demo failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
