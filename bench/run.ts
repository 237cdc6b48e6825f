/**
 * `npm run bench [-- --size small|full] [--out DIR] [--workers processes|in-process] [--only NAMES] [--scale-objects N] [--scale-rest-seconds N] [--tracing] [--max-passes-in-flight N]`: starts a local stack, runs the nine scenarios (or those named)
 * against homeostat and its baselines, prints the markdown table, writes the results and stops the
 * stack (also on Ctrl-C).
 */
import { readFileSync } from 'node:fs';
import { runBench } from './bench';
import { type ScenarioName, scenarioNames } from './report';
import type { SizeName } from './sizes';
import type { NoisySteps } from './scenarios/noisy-neighbour';
import type { WorkerPlacement } from './systems';

interface Args {
  size: SizeName;
  out?: string;
  workers: WorkerPlacement;
  only?: ScenarioName[];
  scaleObjects?: number;
  tracing?: boolean;
  maxPassesInFlight?: number;
  maxPassesInFlightPerNamespace?: number;
  scaleRestSeconds?: number;
  noisySteps?: NoisySteps[];
}

/** `--only a,b`: scenario names, each one of {@link scenarioNames}. */
function parseOnly(v: string): ScenarioName[] {
  const names = v.split(',').map((x) => x.trim());
  for (const n of names) {
    if (!(scenarioNames as readonly string[]).includes(n)) {
      throw new Error(`--only takes scenario names (${scenarioNames.join(', ')}), not ${n}`);
    }
  }
  return names as ScenarioName[];
}

function parseArgs(argv: readonly string[]): Args {
  let size: SizeName = 'full';
  let scaleObjects: number | undefined;
  let out: string | undefined;
  let only: ScenarioName[] | undefined;
  let workers: WorkerPlacement = 'processes';
  let tracing = false;
  let maxPassesInFlight: number | undefined;
  let maxPassesInFlightPerNamespace: number | undefined;
  let scaleRestSeconds: number | undefined;
  let noisySteps: NoisySteps[] | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = (): string => {
      const v = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++i];
      if (!v) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg.startsWith('--size')) {
      const v = value();
      if (v !== 'full' && v !== 'small') throw new Error(`--size must be full or small, not ${v}`);
      size = v;
    } else if (arg.startsWith('--out')) out = value();
    else if (arg.startsWith('--only')) only = parseOnly(value());
    else if (arg.startsWith('--workers')) {
      const v = value();
      if (v !== 'processes' && v !== 'in-process')
        throw new Error(`--workers must be processes or in-process, not ${v}`);
      workers = v;
    } else if (arg.startsWith('--scale-objects')) {
      scaleObjects = Number(value());
      if (!Number.isInteger(scaleObjects) || scaleObjects < 1)
        throw new Error(`--scale-objects must be a positive integer`);
    } else if (arg.startsWith('--scale-rest-seconds')) {
      scaleRestSeconds = Number(value());
      if (!Number.isInteger(scaleRestSeconds) || scaleRestSeconds < 10)
        throw new Error(`--scale-rest-seconds must be an integer of at least 10`);
    } else if (arg.startsWith('--max-passes-in-flight-per-namespace')) {
      maxPassesInFlightPerNamespace = Number(value());
      if (!Number.isInteger(maxPassesInFlightPerNamespace) || maxPassesInFlightPerNamespace < 1)
        throw new Error(`--max-passes-in-flight-per-namespace must be a positive integer`);
    } else if (arg.startsWith('--max-passes-in-flight')) {
      maxPassesInFlight = Number(value());
      if (!Number.isInteger(maxPassesInFlight) || maxPassesInFlight < 0)
        throw new Error(`--max-passes-in-flight must be 0 (no bound) or a positive integer`);
    } else if (arg.startsWith('--noisy-steps')) {
      const v = value();
      if (v !== 'regular' && v !== 'local' && v !== 'both')
        throw new Error(`--noisy-steps must be regular, local or both, not ${v}`);
      noisySteps = v === 'both' ? ['regular', 'local'] : [v];
    } else if (arg === '--tracing') tracing = true;
    else if (arg === '--help' || arg === '-h') {
      process.stdout.write(
        `usage: npm run bench -- [--size full|small] [--out DIR] [--workers processes|in-process] [--only ${scenarioNames.join(',')}] [--scale-objects N] [--scale-rest-seconds N] [--tracing] [--max-passes-in-flight N] [--max-passes-in-flight-per-namespace N] [--noisy-steps regular|local|both]\n`,
      );
      process.exit(0);
    } else throw new Error(`unknown argument ${arg}`);
  }
  return {
    size,
    workers,
    ...(out ? { out } : {}),
    ...(only ? { only } : {}),
    ...(scaleObjects ? { scaleObjects } : {}),
    ...(tracing ? { tracing } : {}),
    ...(maxPassesInFlight !== undefined ? { maxPassesInFlight } : {}),
    ...(maxPassesInFlightPerNamespace !== undefined ? { maxPassesInFlightPerNamespace } : {}),
    ...(scaleRestSeconds !== undefined ? { scaleRestSeconds } : {}),
    ...(noisySteps ? { noisySteps } : {}),
  };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const { files } = await runBench({
    size: args.size,
    workers: args.workers,
    ...(args.only ? { only: args.only } : {}),
    ...(args.out ? { resultsDir: args.out } : {}),
    ...(args.scaleObjects ? { scaleObjects: args.scaleObjects } : {}),
    ...(args.scaleRestSeconds ? { scaleRestSeconds: args.scaleRestSeconds } : {}),
    ...(args.tracing ? { tracing: true } : {}),
    ...(args.maxPassesInFlight !== undefined ? { maxPassesInFlight: args.maxPassesInFlight } : {}),
    ...(args.maxPassesInFlightPerNamespace !== undefined
      ? { maxPassesInFlightPerNamespace: args.maxPassesInFlightPerNamespace }
      : {}),
    ...(args.noisySteps ? { noisySteps: args.noisySteps } : {}),
  });
  process.stdout.write(`\n${readFileSync(files.md, 'utf8')}\n`);
  process.stdout.write(
    `wrote ${files.json}, ${files.md} and ${files.latest} in ${Math.round((Date.now() - started) / 1000)} s\n`,
  );
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
