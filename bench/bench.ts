/**
 * One benchmark run: on a given stack (or one it starts and stops), bundles and starts the workers,
 * installs the `BenchObject` CRD, runs the nine scenarios (the at-rest one beside the others), or the ones asked for, and
 * writes the results.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { type Stack, startStack } from '../devstack';
import { readState } from '../devstack/stack-state';
import { describeEnvironment } from './machine';
import { installBenchCrd, kubeFrom } from './objects';
import { type BenchResult, type ScenarioName, writeResults } from './report';
import { startAtRest } from './scenarios/at-rest';
import { burstScenario } from './scenarios/burst';
import { costScenario } from './scenarios/cost';
import { latencyScenario } from './scenarios/latency';
import { memoryScenario } from './scenarios/memory';
import { noisyNeighbourScenario, type NoisySteps } from './scenarios/noisy-neighbour';
import { scaleScenario } from './scenarios/scale';
import { stormScenario } from './scenarios/storm';
import { upgradeScenario } from './scenarios/upgrade';
import { type SizeName, sizes } from './sizes';
import { type BenchContext, connectClient, startWorkers, type WorkerPlacement } from './systems';
import { startBenchTracing } from './tracing';

/** Options of {@link runBench}. */
export interface RunBenchOptions {
  /** @default 'full' */
  readonly size?: SizeName;
  /** A running stack to use; without it, a stack is started for the run and stopped after. */
  readonly stack?: Stack;
  /** Where the result files go. @default `bench/results` */
  readonly resultsDir?: string;
  /** Progress lines. @default stderr */
  readonly progress?: (line: string) => void;
  /**
   * Log level of homeostat's worker and bridge in the run (pino). Retried 409s on status writes during
   * the storm are expected and logged as warnings.
   * @default 'error'
   */
  readonly logLevel?: 'error' | 'warn' | 'info' | 'debug';
  /**
   * Where the three Temporal workers run: each in its own process, as deployed, or inside the
   * benchmark's process (beside the bridges, controllers and Ready watches, sharing one event loop).
   * @default 'processes'
   */
  readonly workers?: WorkerPlacement;
  /**
   * Run only these scenarios (e.g. `['upgrade']` at full size, which takes minutes instead of the whole
   * run's hour); the results files are then named after them. @default every scenario
   */
  readonly only?: readonly ScenarioName[];
  /** Objects of the scale scenario instead of the size's (the 50,000 step). @default the size's `scale.objects` */
  readonly scaleObjects?: number;
  /**
   * Length of the scale scenario's two rest windows instead of the size's: shorter windows re-measure
   * its creation, restart and 1% steps quickly; their at-rest figures then hold few drift checks.
   * @default the size's `scale.restSeconds`
   */
  readonly scaleRestSeconds?: number;
  /**
   * Trace every pass to a Jaeger the run starts (bench/tracing.ts): the rows then price tracing on, to
   * set beside a run without it. @default false
   */
  readonly tracing?: boolean;
  /** The bridges' `maxPassesInFlight` (0: no bound), to compare admission settings. @default the bridge's default */
  readonly maxPassesInFlight?: number;
  /** The noisy neighbour's bridge share per namespace (`maxPassesInFlightPerNamespace`). @default the bridge's default */
  readonly maxPassesInFlightPerNamespace?: number;
  /** The noisy neighbour's workers: regular steps, local steps or both. @default both */
  readonly noisySteps?: readonly NoisySteps[];
}

/** What {@link runBench} returns: the result and the files it wrote. */
export interface RunBenchOutcome {
  readonly result: BenchResult;
  readonly files: { readonly json: string; readonly md: string; readonly latest: string };
}

/** Runs the benchmark and writes its results. */
export async function runBench(options: RunBenchOptions = {}): Promise<RunBenchOutcome> {
  const size = options.size ?? 'full';
  const parameters =
    options.scaleObjects || options.scaleRestSeconds
      ? {
          ...sizes[size],
          scale: {
            ...sizes[size].scale,
            ...(options.scaleObjects ? { objects: options.scaleObjects } : {}),
            ...(options.scaleRestSeconds ? { restSeconds: options.scaleRestSeconds } : {}),
          },
        }
      : sizes[size];
  const workers = options.workers ?? 'processes';
  const progress = options.progress ?? ((line: string) => process.stderr.write(`[bench] ${line}\n`));
  const workDir = mkdtempSync(join(tmpdir(), 'homeostat-bench-'));
  const runId = `bench-${randomBytes(3).toString('hex')}`;
  let ownStack: Stack | undefined;
  const cleanup: (() => Promise<void>)[] = [];
  try {
    let stack = options.stack;
    if (!stack) {
      progress('starting a local stack');
      ownStack = await startStack({ name: `${runId}-${process.pid}`, progress });
      stack = ownStack;
      const own = ownStack;
      const interrupted = (signal: NodeJS.Signals): void => {
        progress(`${signal}: stopping the stack`);
        void own.stop().finally(() => process.exit(130));
      };
      process.once('SIGINT', interrupted);
      process.once('SIGTERM', interrupted);
      cleanup.push(async () => {
        process.off('SIGINT', interrupted);
        process.off('SIGTERM', interrupted);
      });
    }
    const endpoints = stack.endpoints;
    const kube = kubeFrom(endpoints.kubeconfig);
    const log = pino({ name: 'bench', level: options.logLevel ?? 'error' }, pino.destination(2));
    await installBenchCrd(kube);
    const temporal = await connectClient(endpoints.temporalAddress, endpoints.temporalNamespace);
    const client = temporal.client;
    cleanup.push(() => temporal.close());
    const tracing = options.tracing ? await startBenchTracing(workDir, progress) : undefined;
    if (tracing) cleanup.push(() => tracing.stop());
    progress('bundling workflows and starting workers');
    const started = await startWorkers({
      kube,
      temporalAddress: endpoints.temporalAddress,
      temporalNamespace: endpoints.temporalNamespace,
      kubeconfig: endpoints.kubeconfig,
      log,
      workDir,
      placement: workers,
    });
    cleanup.unshift(() => started.workers.stop());
    /** The bridges' admission limits the run set (`--max-passes-in-flight…`): the context's and the header's. */
    const admission = {
      ...(options.maxPassesInFlight !== undefined ? { maxPassesInFlight: options.maxPassesInFlight } : {}),
      ...(options.maxPassesInFlightPerNamespace !== undefined
        ? { maxPassesInFlightPerNamespace: options.maxPassesInFlightPerNamespace }
        : {}),
    };
    const ctx: BenchContext = {
      kube,
      temporal: client,
      temporalNamespace: endpoints.temporalNamespace,
      temporalAddress: endpoints.temporalAddress,
      kubeconfig: endpoints.kubeconfig,
      postgresUrl: endpoints.postgresUrl,
      log,
      homeostatQueue: started.homeostatQueue,
      homeostatRegularQueue: started.homeostatRegularQueue,
      rawQueue: started.rawQueue,
      homeostatBundlePath: started.homeostatBundlePath,
      workDir,
      runId,
      progress,
      ...admission,
      serverPids: Object.fromEntries(
        Object.entries(readState(stack.name)?.processes ?? {}).map(([name, proc]) => [name, proc.pid]),
      ),
    };
    const environment = await describeEnvironment(kube.kc, client);
    const t0 = performance.now();
    progress(
      `size ${size}, workers ${workers === 'processes' ? 'in processes of their own' : 'in process'}: ${JSON.stringify(parameters)}`,
    );
    const wanted = (name: ScenarioName): boolean => !options.only || options.only.includes(name);
    // The at-rest objects idle on a worker of their own while the other scenarios run.
    const rest = wanted('atRest') ? await startAtRest(ctx, parameters.atRest) : undefined;
    if (rest) cleanup.unshift(() => rest.stop());
    const scenarios: BenchResult['scenarios'] = {};
    if (wanted('latency')) scenarios.latency = await latencyScenario(ctx, parameters.latencyObjects);
    if (wanted('burst')) scenarios.burst = await burstScenario(ctx, parameters.burstObjects);
    if (wanted('storm')) scenarios.storm = await stormScenario(ctx, parameters.stormUpdates);
    if (wanted('memory')) {
      scenarios.memory = await memoryScenario(ctx, parameters.memoryObjects, parameters.memoryWorkflows);
    }
    if (wanted('cost')) scenarios.cost = await costScenario(ctx, parameters.costPasses);
    if (wanted('noisyNeighbour')) {
      scenarios.noisyNeighbour = await noisyNeighbourScenario(
        ctx,
        parameters.noisyFloodObjects,
        parameters.noisyQuietChanges,
        options.noisySteps,
      );
    }
    if (wanted('upgrade')) {
      scenarios.upgrade = await upgradeScenario(ctx, parameters.upgradeObjects, parameters.upgradeDriftInterval);
    }
    if (wanted('scale')) scenarios.scale = await scaleScenario(ctx, parameters.scale);
    if (rest) scenarios.atRest = await rest.finish();
    const result: BenchResult = {
      size,
      parameters,
      workers,
      environment,
      durationSeconds: Math.round((performance.now() - t0) / 1000),
      scenarios,
      ...(options.only ? { only: options.only } : {}),
      ...(Object.keys(admission).length > 0 ? { admission } : {}),
      ...(tracing ? { tracing: { services: await tracing.services() } } : {}),
    };
    const files = writeResults(result, options.resultsDir ?? join(__dirname, 'results'));
    return { result, files };
  } finally {
    for (const fn of cleanup) await fn().catch(() => {});
    if (ownStack) {
      progress('stopping the stack');
      await ownStack.stop().catch(() => {});
    }
    rmSync(workDir, { recursive: true, force: true });
  }
}
