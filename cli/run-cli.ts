/**
 * The `homeostat` command line, for any operator: `worker`, `bridge`, `api` and `all` (the three in
 * one process) run the production processes (configured by environment variables, validated once at
 * start) for the operator named by `--operator <module>` (or HOMEOSTAT_OPERATOR; the default is the
 * operator given to {@link runCli}); `crds` prints its CustomResourceDefinitions (or writes them one file
 * per kind with `--out-dir`); `dev` runs it on the embedded local stack, and `env` prints that stack's
 * environment; `init` scaffolds a new operator project; `reconcile`, `get`, `list`, `diff`, `approve`, `reject` and `pending` talk to a
 * running API; `rollout` moves the operator between the versions of its Temporal Worker Deployment.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command, Option } from 'commander';
import { operatorProblems, type Operator } from '../core/operator';
import { operatorCrds } from '../reconcilers/crd';
import { renderCrdYaml } from '../reconcilers/crd-yaml';
import { crdFolderFiles, crdFolderProblems, writeCrdFolder } from './crd-folder';
import { type ApiTarget, getCommand, listCommand, reconcileCommand } from './client';
import { rolloutCommand } from './rollout-command';
import { diffCommand } from './diff';
import { decideCommand, pendingCommand } from './approve';
import type { workerMain as workerMainFn } from '../workers/main';
import type { bridgeMain as bridgeMainFn } from '../informer-bridge/main';
import type { apiMain as apiMainFn } from '../api/main';
import type { allMain as allMainFn } from './all';
import type { runDev as runDevFn } from './dev';
import type { scaffold as scaffoldFn } from './init';
import type * as devstack from '../devstack';

const stackNameHelp =
  'name of the local stack (default: demo-<project folder>-<hash of the user and the project folder>, so two projects or users never share one)';

/** Options of {@link runCli}. */
export interface RunCliOptions {
  /** The operator used when neither `--operator` nor HOMEOSTAT_OPERATOR names one. */
  readonly operator?: Operator;
  /** @default process.argv */
  readonly argv?: readonly string[];
}

/**
 * Loads an operator module: its default export, or its export named `operator` (ESM or CommonJS,
 * compiled JavaScript or, under tsx, TypeScript). Exits with status 2 and every problem when the
 * module cannot be loaded or does not export a runnable operator.
 */
export async function loadOperatorModule(specifier: string): Promise<Operator> {
  const fail = (lines: string[]): never => {
    process.stderr.write(`homeostat: --operator ${specifier}:\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
    process.exit(2);
  };
  let mod: Record<string, unknown>;
  try {
    // A path (`./x.js`, `/x.js`, or a file that exists, as in `--operator dist/operator.js`), else a package.
    const isPath = specifier.startsWith('.') || specifier.startsWith('/') || existsSync(resolve(specifier));
    const url = isPath ? pathToFileURL(resolve(specifier)).href : specifier;
    mod = (await import(url)) as Record<string, unknown>;
  } catch (err) {
    return fail([`cannot load the module: ${err instanceof Error ? err.message : String(err)}`]);
  }
  const inner = (mod.default ?? {}) as Record<string, unknown>;
  const candidate = [mod.operator, inner.operator, inner.default, mod.default].find(
    (c) => typeof c === 'object' && c !== null && Array.isArray((c as { reconcilers?: unknown }).reconcilers),
  ) as Operator | undefined;
  if (!candidate) return fail(['exports no operator: export default defineOperator({ … }) (or export const operator)']);
  const problems = operatorProblems(candidate);
  if (problems.length > 0) return fail(problems);
  return candidate;
}

/** Runs the `homeostat` command line; a team's own binary calls it with its operator as the default. */
export async function runCli(options: RunCliOptions = {}): Promise<void> {
  const operatorOf = async (opts: { operator?: string }): Promise<Operator> => {
    // The CLI is an edge: HOMEOSTAT_OPERATOR is read here and nowhere else.
    const specifier = opts.operator ?? process.env.HOMEOSTAT_OPERATOR;
    if (specifier) return loadOperatorModule(specifier);
    if (options.operator) return options.operator;
    process.stderr.write('homeostat: no operator: pass --operator <module> (or set HOMEOSTAT_OPERATOR)\n');
    process.exit(2);
  };
  const withOperator = (c: Command): Command =>
    c.option(
      '--operator <module>',
      'the operator module to run (default $HOMEOSTAT_OPERATOR or the built-in operator)',
    );

  const print = (text: string): void => {
    process.stdout.write(`${text}\n`);
  };

  const program = new Command()
    .name('homeostat')
    .description('durable reconciliation of Kubernetes objects with Temporal')
    .showHelpAfterError();

  // The process modules are loaded lazily: each command loads only what it runs.
  /* eslint-disable @typescript-eslint/no-require-imports */
  withOperator(
    program
      .command('worker')
      .description(
        'run a worker: the per-object workflows and the reconcilers’ activities (env: TEMPORAL_*, HOMEOSTAT_*)',
      ),
  ).action(async (opts: { operator?: string }) => {
    const { workerMain } = require('../workers/main') as { workerMain: typeof workerMainFn };
    await workerMain(await operatorOf(opts));
  });
  withOperator(
    program
      .command('bridge')
      .description(
        'run the informer bridge: watch events become Temporal signals (env: TEMPORAL_*, HOMEOSTAT_BRIDGE_*)',
      ),
  ).action(async (opts: { operator?: string }) => {
    const { bridgeMain } = require('../informer-bridge/main') as { bridgeMain: typeof bridgeMainFn };
    await bridgeMain(await operatorOf(opts));
  });
  withOperator(
    program
      .command('api')
      .description('run the HTTP API: trigger and read reconciles (env: TEMPORAL_*, HOMEOSTAT_API_*)'),
  ).action(async (opts: { operator?: string }) => {
    const { apiMain } = require('../api/main') as { apiMain: typeof apiMainFn };
    await apiMain(await operatorOf(opts));
  });
  withOperator(
    program
      .command('all')
      .description('run the worker, the informer bridge and the API in one process (env: all of theirs)'),
  ).action(async (opts: { operator?: string }) => {
    const { allMain } = require('./all') as { allMain: typeof allMainFn };
    await allMain(await operatorOf(opts));
  });
  withOperator(
    program
      .command('dev')
      .description('run the operator on the embedded local stack: CRDs installed, examples applied, progress shown')
      .option(
        '--examples <dir>',
        'a folder of YAML objects to apply (default: the built-in examples for the built-in operator)',
      )
      .option('--exit-when-ready', 'stop once the examples are Ready')
      .option('--stack-name <name>', stackNameHelp),
  ).action(async (opts: { operator?: string; examples?: string; exitWhenReady?: boolean; stackName?: string }) => {
    const { runDev } = require('./dev') as { runDev: typeof runDevFn };
    const operatorModule = opts.operator ?? process.env.HOMEOSTAT_OPERATOR;
    await runDev({
      operator: await operatorOf(opts),
      ...(operatorModule ? { operatorModule } : {}),
      ...(opts.examples ? { examples: opts.examples } : {}),
      exitWhenReady: opts.exitWhenReady === true,
      ...(opts.stackName ? { stackName: opts.stackName } : {}),
    });
  });
  program
    .command('env')
    .description('print the environment of a local stack that `dev` started, as shell exports: eval "$(homeostat env)"')
    .option('--stack-name <name>', stackNameHelp)
    .action((opts: { stackName?: string }) => {
      const { defaultStackName, endpointsOf, readState, shellExports } = require('../devstack') as typeof devstack;
      const name = opts.stackName ?? defaultStackName('demo');
      const state = readState(name);
      if (!state) throw new Error(`no local stack named ${name} (homeostat dev starts one)`);
      print(shellExports(endpointsOf(state)).join('\n'));
    });
  withOperator(
    program
      .command('crds')
      .description('print the operator’s CustomResourceDefinitions as YAML, or write them one file per kind')
      .option(
        '--out-dir <dir>',
        'write one file per kind (<plural>.<group>.yaml) and a kustomization.yaml listing them into this folder',
      )
      .option('--check', 'with --out-dir: write nothing, exit 1 naming every file that is missing or out of date'),
  ).action(async (opts: { operator?: string; outDir?: string; check?: boolean }) => {
    const operator = await operatorOf(opts);
    if (opts.outDir === undefined) {
      if (opts.check) throw new Error('--check compares a folder: give it with --out-dir <dir>');
      process.stdout.write(Object.values(operatorCrds(operator)).map(renderCrdYaml).join('---\n'));
      return;
    }
    const files = crdFolderFiles(operator);
    if (opts.check) {
      const problems = crdFolderProblems(opts.outDir, files);
      for (const p of problems) process.stderr.write(`${join(opts.outDir, p)}: run homeostat crds --out-dir\n`);
      if (problems.length) process.exitCode = 1;
      return;
    }
    for (const file of writeCrdFolder(opts.outDir, files)) process.stdout.write(`wrote ${join(opts.outDir, file)}\n`);
  });
  program
    .command('init <dir>')
    .description('scaffold a new operator project (a Tenant reconciler, its CRD, tests on the real local stack)')
    .option('--name <name>', 'the project and operator name (default: the folder name)')
    .option(
      '--homeostat <spec>',
      'the project’s homeostat dependency: a version range or an npm pack tarball (default $HOMEOSTAT_INIT_DEPENDENCY or ^ this version)',
    )
    .action(async (dir: string, opts: { name?: string; homeostat?: string }) => {
      const { scaffold } = require('./init') as { scaffold: typeof scaffoldFn };
      const homeostat = opts.homeostat ?? process.env.HOMEOSTAT_INIT_DEPENDENCY;
      await scaffold({
        dir,
        ...(opts.name !== undefined ? { name: opts.name } : {}),
        ...(homeostat !== undefined ? { homeostat } : {}),
        log: (l) => process.stdout.write(`${l}\n`),
      });
    });
  /* eslint-enable @typescript-eslint/no-require-imports */
  program.addCommand(rolloutCommand({ operatorOf }));

  // The CLI is an edge: it reads its settings from the environment here and nowhere else. The token
  // never comes from the command line, where every user of the machine sees it in the process list.
  const target = (opts: { api?: string; token?: string; tokenFile?: string; caFile?: string }): ApiTarget => {
    if (opts.token !== undefined) {
      throw new Error(
        'a token on the command line is visible to every user in the process list: set HOMEOSTAT_API_TOKEN, or --token-file / HOMEOSTAT_API_TOKEN_FILE',
      );
    }
    const file = opts.tokenFile ?? process.env.HOMEOSTAT_API_TOKEN_FILE;
    let token = process.env.HOMEOSTAT_API_TOKEN;
    if (file !== undefined) {
      try {
        token = readFileSync(file, 'utf8').trim();
      } catch (err) {
        throw new Error(`cannot read the token file ${file}: ${(err as Error).message}`);
      }
      if (token === '') throw new Error(`the token file ${file} is empty`);
    }
    const caFile = opts.caFile ?? process.env.HOMEOSTAT_API_CA_FILE;
    let ca: Buffer | undefined;
    if (caFile !== undefined) {
      try {
        ca = readFileSync(caFile);
      } catch (err) {
        throw new Error(`cannot read the CA file ${caFile}: ${(err as Error).message}`);
      }
    }
    return {
      url: opts.api ?? process.env.HOMEOSTAT_API_URL ?? 'https://127.0.0.1:8080',
      ...(token ? { token } : {}),
      ...(ca ? { ca } : {}),
    };
  };
  const apiOptions = (c: Command): Command =>
    c
      .option('--api <url>', 'API base URL (default $HOMEOSTAT_API_URL or https://127.0.0.1:8080)')
      .option(
        '--ca-file <path>',
        'CA certificate the API’s HTTPS certificate is checked against (default $HOMEOSTAT_API_CA_FILE, else the system’s)',
      )
      .option(
        '--token-file <path>',
        'file holding the bearer token (default $HOMEOSTAT_API_TOKEN_FILE, else $HOMEOSTAT_API_TOKEN)',
      )
      .addOption(new Option('--token <token>').hideHelp())
      .option('-o, --output <format>', 'table or json', 'table');

  apiOptions(
    program.command('reconcile <kind> <namespace/name>').description('run a reconcile pass now and print its outcome'),
  ).action(
    async (
      kind: string,
      name: string,
      opts: { api?: string; token?: string; tokenFile?: string; caFile?: string; output: string },
    ) => print(await reconcileCommand(target(opts), kind, name, opts.output === 'json')),
  );
  apiOptions(program.command('get <kind> <namespace/name>').description('print an object’s reconcile state')).action(
    async (
      kind: string,
      name: string,
      opts: { api?: string; token?: string; tokenFile?: string; caFile?: string; output: string },
    ) => print(await getCommand(target(opts), kind, name, opts.output === 'json')),
  );
  apiOptions(
    program
      .command('list <kind>')
      .description('list reconciled objects (Temporal visibility)')
      .option('-n, --namespace <namespace>', 'only this namespace')
      .option('--phase <phase>', 'only this phase'),
  ).action(
    async (
      kind: string,
      opts: {
        api?: string;
        token?: string;
        tokenFile?: string;
        output: string;
        namespace?: string;
        phase?: string;
      },
    ) => print(await listCommand(target(opts), kind, opts, opts.output === 'json')),
  );

  apiOptions(
    program
      .command('diff [kind] [namespace/name]')
      .description(
        'what a reconcile pass would do (a dry run: nothing is written); exit 0: nothing would change, 1: something would, 2: error',
      )
      .option(
        '-f, --filename <file>',
        'plan this manifest (YAML or JSON; - for standard input) instead of the stored object',
      )
      .option('--json', 'print the dry run as JSON (the API’s answer)'),
  ).action(
    async (
      kind: string | undefined,
      name: string | undefined,
      opts: {
        api?: string;
        token?: string;
        tokenFile?: string;
        caFile?: string;
        output: string;
        filename?: string;
        json?: boolean;
      },
    ) => {
      try {
        const { output, changed } = await diffCommand(
          target(opts),
          {
            ...(kind !== undefined ? { kind } : {}),
            ...(name !== undefined ? { name } : {}),
            ...(opts.filename !== undefined ? { file: opts.filename } : {}),
          },
          opts.json === true || opts.output === 'json',
        );
        print(output);
        process.exitCode = changed ? 1 : 0;
      } catch (err) {
        // As kubectl diff: 1 means "differences", so an error is 2.
        process.stderr.write(`homeostat diff: ${err instanceof Error ? err.message : String(err)}\n`);
        process.exitCode = 2;
      }
    },
  );

  for (const decision of ['approve', 'reject'] as const) {
    apiOptions(
      program
        .command(`${decision} <kind> <namespace/name>`)
        .description(
          decision === 'approve'
            ? 'approve the step an object waits for (RBAC verb approve)'
            : 'reject the step an object waits for: nothing is done (RBAC verb approve)',
        )
        .option('--comment <text>', 'why (recorded with the decision; at most 1024 characters)')
        .option('--generation <n>', 'the generation you reviewed: refused (409) if another one waits', (v) =>
          Number(v),
        ),
    ).action(
      async (
        kind: string,
        name: string,
        opts: {
          api?: string;
          token?: string;
          tokenFile?: string;
          caFile?: string;
          output: string;
          comment?: string;
          generation?: number;
        },
      ) =>
        print(
          await decideCommand(
            target(opts),
            decision,
            kind,
            name,
            {
              ...(opts.comment !== undefined ? { comment: opts.comment } : {}),
              ...(opts.generation !== undefined ? { generation: opts.generation } : {}),
            },
            opts.output === 'json',
          ),
        ),
    );
  }
  apiOptions(
    program
      .command('pending')
      .description('list every object awaiting approval (Temporal visibility)')
      .option('-n, --namespace <namespace>', 'only this namespace'),
  ).action(
    async (opts: {
      api?: string;
      token?: string;
      tokenFile?: string;
      caFile?: string;
      output: string;
      namespace?: string;
    }) => print(await pendingCommand(target(opts), opts.output === 'json', opts.namespace)),
  );

  await program.parseAsync(options.argv ? [...options.argv] : process.argv);
}
