#!/usr/bin/env node
/**
 * `homeostat`: the command line of homeostat's processes. `homeostat worker` and `homeostat bridge`
 * run the production processes (configured by environment variables, validated once at start);
 * `homeostat crds` prints the built-in CustomResourceDefinitions as YAML.
 */
import { Command } from 'commander';
import { builtinCrds } from '../reconcilers/builtin-crds';
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
  .command('crds')
  .description('print the CustomResourceDefinitions of the built-in reconcilers as YAML')
  .action(() => {
    process.stdout.write(Object.values(builtinCrds()).map(renderCrdYaml).join('---\n'));
  });

program.parseAsync().catch((err: unknown) => {
  process.stderr.write(`homeostat: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
