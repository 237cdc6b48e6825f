#!/usr/bin/env node
/**
 * `homeostat`: the command line of homeostat's processes. `homeostat worker`, `bridge`, `api` and
 * `all` (the three in one process) run the production processes (configured by environment variables, validated once at start);
 * `homeostat crds` prints the built-in CustomResourceDefinitions as YAML.
 */
import { Command } from 'commander';
import { builtinCrds } from '../reconcilers/builtin-crds';
import { type ApiTarget, getCommand, listCommand, reconcileCommand } from './client';
import { renderCrdYaml } from '../reconcilers/crd-yaml';

const program = new Command()
  .name('homeostat')
  .description('durable reconciliation of Kubernetes objects with Temporal')
  .showHelpAfterError();

program
  .command('worker')
  .description('run a worker: the per-object workflows and the reconcilers’ activities (env: TEMPORAL_*, HOMEOSTAT_*)')
  .action(() => {
    // The process modules start on load: load only the chosen one.
    require('../workers/main'); // eslint-disable-line @typescript-eslint/no-require-imports
  });

program
  .command('bridge')
  .description('run the informer bridge: watch events become Temporal signals (env: TEMPORAL_*, HOMEOSTAT_BRIDGE_*)')
  .action(() => {
    require('../informer-bridge/main'); // eslint-disable-line @typescript-eslint/no-require-imports
  });

program
  .command('api')
  .description('run the HTTP API: trigger and read reconciles (env: TEMPORAL_*, HOMEOSTAT_API_*)')
  .action(() => {
    require('../api/main'); // eslint-disable-line @typescript-eslint/no-require-imports
  });

program
  .command('all')
  .description('run the worker, the informer bridge and the API in one process (env: all of theirs)')
  .action(() => {
    require('./all'); // eslint-disable-line @typescript-eslint/no-require-imports
  });

program
  .command('dev')
  .description('run the demo on the embedded local stack (development machines; same as npm run demo)')
  .option('--exit-when-ready', 'stop once the examples are Ready')
  .option('--stack-name <name>', 'name of the local stack', 'demo')
  .action(() => {
    // The demo reads its own flags from argv; drop the sub-command name.
    process.argv.splice(2, 1);
    require('../scripts/demo'); // eslint-disable-line @typescript-eslint/no-require-imports
  });

program
  .command('crds')
  .description('print the CustomResourceDefinitions of the built-in reconcilers as YAML')
  .action(() => {
    process.stdout.write(Object.values(builtinCrds()).map(renderCrdYaml).join('---\n'));
  });

// The CLI is an edge: it reads its two settings from the environment here and nowhere else.
const target = (opts: { api?: string; token?: string }): ApiTarget => ({
  url: opts.api ?? process.env.HOMEOSTAT_API_URL ?? 'http://127.0.0.1:8080',
  ...((opts.token ?? process.env.HOMEOSTAT_API_TOKEN) ? { token: opts.token ?? process.env.HOMEOSTAT_API_TOKEN } : {}),
});
const print = (text: string): void => {
  process.stdout.write(`${text}\n`);
};
const apiOptions = (c: Command): Command =>
  c
    .option('--api <url>', 'API base URL (default $HOMEOSTAT_API_URL or http://127.0.0.1:8080)')
    .option('--token <token>', 'bearer token (default $HOMEOSTAT_API_TOKEN)')
    .option('-o, --output <format>', 'table or json', 'table');

apiOptions(
  program.command('reconcile <kind> <namespace/name>').description('run a reconcile pass now and print its outcome'),
).action(async (kind: string, name: string, opts: { api?: string; token?: string; output: string }) =>
  print(await reconcileCommand(target(opts), kind, name, opts.output === 'json')),
);
apiOptions(program.command('get <kind> <namespace/name>').description('print an object’s reconcile state')).action(
  async (kind: string, name: string, opts: { api?: string; token?: string; output: string }) =>
    print(await getCommand(target(opts), kind, name, opts.output === 'json')),
);
apiOptions(
  program
    .command('list <kind>')
    .description('list reconciled objects (Temporal visibility)')
    .option('-n, --namespace <namespace>', 'only this namespace')
    .option('--phase <phase>', 'only this phase'),
).action(
  async (kind: string, opts: { api?: string; token?: string; output: string; namespace?: string; phase?: string }) =>
    print(await listCommand(target(opts), kind, opts, opts.output === 'json')),
);

program.parseAsync().catch((err: unknown) => {
  process.stderr.write(`homeostat: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
