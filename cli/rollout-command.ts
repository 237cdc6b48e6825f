/**
 * `homeostat rollout status | ramp <percent> [build] | promote [build] | rollback | wake`: moving an
 * operator's new runs and pinned object workflows between the versions of its Worker Deployment
 * (core/rollout). Temporal is reached as every homeostat process reaches it (TEMPORAL_*,
 * HOMEOSTAT_PAYLOAD_KEYS); the deployment is `--deployment`, by default the operator's name.
 *
 * Exit status: 0 done; 1 refused (incompatible build, no pollers, unknown deployment, a version that
 * did not drain in time, Temporal unreachable); 2 a usage error (a bad argument or option).
 */
import { Client, Connection } from '@temporalio/client';
import { Command, type CommanderError } from 'commander';
import { z } from 'zod';
import { dataConverterOf, parseEnv } from '../config';
import type { Operator } from '../core/operator';
import {
  assertRampPercent,
  type CompatibilityGate,
  isRolloutError,
  rolloutErrorCatalog,
  promote,
  ramp,
  rollback,
  rolloutStatus,
  type RolloutTarget,
  type RoutingChange,
  type RoutingOptions,
  waitDrained,
  wake,
} from '../core/rollout';
import { formatRolloutStatus, formatRoutingChange, formatWake } from './rollout-output';

import { defaultTaskQueue } from '../core/definitions';
import { runCompatibilityCheck } from '../workers/compatibility-check';
import { deploymentNameFor } from '../workers/deployment-version';

/** What the rollout commands need from the rest of the CLI. */
export interface RolloutCommandDeps {
  /** Loads the operator named by `--operator` (or the default one): its name is the default deployment. */
  readonly operatorOf: (opts: { operator?: string }) => Promise<Operator>;
  /** The compatibility check run before routing changes. @default the workers' `runCompatibilityCheck` */
  readonly gate?: CompatibilityGate;
}

interface CommonOptions {
  operator?: string;
  deployment?: string;
}
interface RoutingFlags extends CommonOptions {
  skipCheck?: boolean;
  checkLimit?: string;
  wake?: boolean;
  rate?: string;
  waitDrained?: string | boolean;
}

const defaultDrainTimeoutSeconds = 900;

/** A usage error: printed, exit status 2. */
class UsageError extends Error {}

function positiveNumber(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+(\.\d+)?$/.test(value) || Number(value) <= 0) throw new UsageError(`${flag} ${value}: a positive number`);
  return Number(value);
}

/** The `rollout` command with its subcommands. */
export function rolloutCommand(deps: RolloutCommandDeps): Command {
  /** The task queue the operator's workers poll (`HOMEOSTAT_TASK_QUEUE`), read by each run. */
  let taskQueue = defaultTaskQueue;
  // The check runs on the candidate's workers, on their task queue.
  const gate: CompatibilityGate =
    deps.gate ?? ((client, request) => runCompatibilityCheck(client, { ...request, taskQueue }));
  const print = (text: string): void => {
    process.stdout.write(`${text}\n`);
  };

  /** Runs a subcommand with a Temporal client; maps errors to exit statuses 1 and 2 without a stack. */
  const run =
    <A extends unknown[]>(body: (client: Client, target: RolloutTarget, ...args: A) => Promise<void>) =>
    async (...args: A): Promise<void> => {
      const opts = args.at(-2) as CommonOptions;
      let connection: Connection | undefined;
      try {
        // The CLI is an edge: the Temporal settings are parsed here, once, like every process's.
        const { temporal, config } = parseEnv(
          'homeostat rollout',
          z.object({ HOMEOSTAT_TASK_QUEUE: z.string().min(1).default(defaultTaskQueue) }),
          process.env,
        );
        taskQueue = config.HOMEOSTAT_TASK_QUEUE;
        const deploymentName = opts.deployment ?? deploymentNameFor((await deps.operatorOf(opts)).name, taskQueue);
        connection = await Connection.connect(temporal.connectionOptions);
        const client = new Client({ connection, namespace: temporal.namespace, ...dataConverterOf(temporal) });
        await body(client, { namespace: temporal.namespace, deploymentName }, ...args);
      } catch (err) {
        process.stderr.write(`homeostat rollout: ${err instanceof Error ? err.message : String(err)}\n`);
        const usage = err instanceof UsageError || (err as { name?: string }).name === 'ConfigError';
        process.exitCode = isRolloutError(err) ? rolloutErrorCatalog[err.code].exitStatus : usage ? 2 : 1;
      } finally {
        await connection?.close();
      }
    };

  const routingOptions = (opts: RoutingFlags): RoutingOptions => {
    return {
      gate,
      skipCheck: opts.skipCheck === true,
      checkLimit: positiveNumber('--check-limit', opts.checkLimit, 100),
    };
  };

  /** After promote or rollback: `--wake` the pinned workflows, `--wait-drained` for the version left. */
  const after = async (client: Client, target: RolloutTarget, change: RoutingChange, opts: RoutingFlags) => {
    if (opts.wake && change.currentBuildId !== undefined) {
      const fromBuildId = change.previousCurrentBuildId;
      print(
        formatWake(
          await wake(client, target, {
            ...(fromBuildId ? { fromBuildId } : {}),
            ratePerSecond: positiveNumber('--rate', opts.rate, 50),
          }),
        ),
      );
    }
    if (opts.waitDrained !== undefined && change.previousCurrentBuildId !== undefined) {
      const seconds = positiveNumber(
        '--wait-drained',
        typeof opts.waitDrained === 'string' ? opts.waitDrained : undefined,
        defaultDrainTimeoutSeconds,
      );
      const build = change.previousCurrentBuildId;
      print(`waiting up to ${seconds} s for ${build} to drain…`);
      const drainage = await waitDrained(client, target, build, seconds * 1000);
      print(`${build} drained (checked ${drainage.lastCheckedTime ?? 'now'}): its workers may be scaled down`);
    }
  };

  const command = new Command('rollout').description(
    'move new runs and pinned object workflows between versions of the operator’s Worker Deployment (env: TEMPORAL_*)',
  );
  const common = (c: Command): Command =>
    c
      .option(
        '--deployment <name>',
        'the Worker Deployment (default: the operator’s name, "." and ":" as "-", and "-<task queue>" unless HOMEOSTAT_TASK_QUEUE is homeostat)',
      )
      .option('--operator <module>', 'the operator module whose name is the default deployment')
      .exitOverride((err: CommanderError) => {
        if (err.exitCode !== 0) process.exit(2);
        process.exit(0);
      });
  const routing = (c: Command): Command =>
    common(c)
      .option(
        '--skip-check',
        'DANGEROUS: change routing without the compatibility check (an incompatible build fails the runs it takes over)',
      )
      .option('--check-limit <n>', 'how many running workflows the compatibility check replays', '100');
  const moving = (c: Command): Command =>
    routing(c)
      .option(
        '--wake',
        'then signal every workflow pinned to the old version so it moves now (1 signal + 1 continue-as-new each)',
      )
      .option('--rate <n>', 'with --wake: signals per second', '50')
      .option(
        '--wait-drained [seconds]',
        `then wait until the old version is drained (default ${defaultDrainTimeoutSeconds} s)`,
      );

  command.addCommand(
    common(new Command('status'))
      .description('the versions: status, ramp, pollers, running workflows, drainage')
      .option('--json', 'print JSON')
      .action(
        run(async (client, target, opts: { json?: boolean }) => {
          const status = await rolloutStatus(client, target);
          print(opts.json ? JSON.stringify(status, null, 2) : formatRolloutStatus(status));
        }),
      ),
  );
  command.addCommand(
    routing(new Command('ramp'))
      .argument('<percent>', 'share of new runs for the build: above 0, below 100; 0 clears the ramp')
      .argument('[build]', 'the build ID (default: the newest version that is not Current)')
      .description('send a share of new runs to a build (pinned runs stay where they are)')
      .action(
        run(async (client, target, percent: string, build: string | undefined, opts: RoutingFlags) => {
          if (!/^\d+(\.\d+)?$/.test(percent)) throw new UsageError(`ramp ${percent}: a percentage from 0 to below 100`);
          assertRampPercent(Number(percent));
          print(formatRoutingChange('ramp', await ramp(client, target, build, Number(percent), routingOptions(opts))));
        }),
      ),
  );
  command.addCommand(
    moving(new Command('promote'))
      .argument('[build]', 'the build ID (default: the Ramping version, else the newest that is not Current)')
      .description('make a build Current: every new run goes to it; pinned runs follow at their next continue-as-new')
      .action(
        run(async (client, target, build: string | undefined, opts: RoutingFlags) => {
          const change = await promote(client, target, build, routingOptions(opts));
          print(formatRoutingChange('promote', change));
          await after(client, target, change, opts);
        }),
      ),
  );
  command.addCommand(
    moving(new Command('rollback'))
      .description('make the previous Current version Current again and clear any ramp')
      .action(
        run(async (client, target, opts: RoutingFlags) => {
          const change = await rollback(client, target, routingOptions(opts));
          print(formatRoutingChange('rollback', change));
          await after(client, target, change, opts);
        }),
      ),
  );
  command.addCommand(
    common(new Command('wake'))
      .description('signal every object workflow pinned to an old version so it continues onto the Current one now')
      .option('--from <build>', 'only the workflows pinned to this build (default: every version but the Current one)')
      .option('--rate <n>', 'signals per second (100,000 objects take about 33 minutes at 50)', '50')
      .action(
        run(async (client, target, opts: CommonOptions & { from?: string; rate?: string }) => {
          const ratePerSecond = positiveNumber('--rate', opts.rate, 50);
          print(
            formatWake(await wake(client, target, { ...(opts.from ? { fromBuildId: opts.from } : {}), ratePerSecond })),
          );
        }),
      ),
  );
  return command;
}
