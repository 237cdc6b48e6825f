/** The benchmark's result: its JSON shape, the markdown table, and the files written. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Environment } from './machine';
import type { BurstResult } from './scenarios/burst';
import type { CostResult } from './scenarios/cost';
import type { LatencyResult } from './scenarios/latency';
import type { MemoryResult } from './scenarios/memory';
import type { StormResult } from './scenarios/storm';
import type { BenchSize, SizeName } from './sizes';
import { ratio, round } from './stats';

/** Everything one run measured. */
export interface BenchResult {
  readonly size: SizeName;
  readonly parameters: BenchSize;
  readonly environment: Environment;
  /** Wall-clock time of the scenarios (stack start and bundling not included). */
  readonly durationSeconds: number;
  readonly scenarios: {
    readonly latency: LatencyResult;
    readonly burst: BurstResult;
    readonly storm: StormResult;
    readonly memory: MemoryResult;
    readonly cost: CostResult;
  };
}

const fmt = (x: number | undefined): string => (x === undefined || Number.isNaN(x) ? '—' : String(x));
const times = (a: number | undefined, b: number | undefined): string =>
  a === undefined || b === undefined ? '—' : `${fmt(ratio(a, b))}×`;

/** The result as markdown: a header with the environment, the table, and how to read it. */
export function markdown(result: BenchResult): string {
  const { latency, burst, storm, memory, cost } = result.scenarios;
  const env = result.environment;
  const rows: string[][] = [];
  const row = (scenario: string, metric: string, hs?: number, a?: number, b?: number): void => {
    rows.push([scenario, metric, fmt(hs), fmt(a), times(hs, a), fmt(b), times(hs, b)]);
  };
  const L = latency.systems;
  row(
    `1. Latency (${latency.objects} objects, one at a time)`,
    'create → Ready, median (ms)',
    L.homeostat.medianMs,
    L.rawTemporal.medianMs,
    L.controller.medianMs,
  );
  row('', 'create → Ready, p99 (ms)', L.homeostat.p99Ms, L.rawTemporal.p99Ms, L.controller.p99Ms);
  const B = burst.systems;
  row(
    `2. Burst (${burst.objects} objects at once)`,
    'all Ready (s)',
    round(B.homeostat.totalMs / 1000, 2),
    round(B.rawTemporal.totalMs / 1000, 2),
    round(B.controller.totalMs / 1000, 2),
  );
  row(
    '',
    'objects/s (higher is better)',
    B.homeostat.objectsPerSecond,
    B.rawTemporal.objectsPerSecond,
    B.controller.objectsPerSecond,
  );
  row(
    '',
    'per object create → Ready, median (ms)',
    B.homeostat.latency.medianMs,
    B.rawTemporal.latency.medianMs,
    B.controller.latency.medianMs,
  );
  row(
    '',
    'per object create → Ready, p99 (ms)',
    B.homeostat.latency.p99Ms,
    B.rawTemporal.latency.p99Ms,
    B.controller.latency.p99Ms,
  );
  const S = storm.systems;
  row(
    `3. Storm (${storm.updates} spec updates, one object)`,
    'signals sent',
    S.homeostat?.signalsSent,
    undefined,
    undefined,
  );
  row('', 'passes run', S.homeostat?.passes, undefined, S.controller?.passes);
  row('', 'last update → observedGeneration (ms)', S.homeostat?.convergeMs, undefined, S.controller?.convergeMs);
  row(
    `4. Memory (${memory.objects} objects)`,
    'cache holder RSS (MiB): bridge vs bare informer',
    memory.bridge.rssMiB,
    undefined,
    memory.informer.rssMiB,
  );
  row('', 'RSS before listing, modules loaded (MiB)', memory.bridge.idleRssMiB, undefined, memory.informer.idleRssMiB);
  row('', 'RSS per cached object (bytes)', memory.bridge.bytesPerObject, undefined, memory.informer.bytesPerObject);
  row(
    '',
    'JS heap per cached object (bytes)',
    memory.bridge.heapBytesPerObject,
    undefined,
    memory.informer.heapBytesPerObject,
  );
  row(
    '',
    `worker RSS per cached workflow (KiB, ${memory.worker.cachedAfter - memory.worker.cachedBefore} workflows)`,
    memory.worker.kibPerWorkflow,
  );
  row(
    `5. Cost (${cost.steps} steps, ${cost.passes} steady passes)`,
    `history events per pass (minimum ${cost.minimum.eventsPerPass})`,
    cost.homeostat.eventsPerPass,
    cost.rawTemporal.eventsPerPass,
  );
  row(
    '',
    `actions per pass (minimum ${cost.minimum.actionsPerPass})`,
    cost.homeostat.actionsPerPass,
    cost.rawTemporal.actionsPerPass,
  );
  row(
    '',
    `USD per million reconciles (minimum ${cost.minimum.usdPerMillionReconciles})`,
    cost.homeostat.usdPerMillionReconciles,
    cost.rawTemporal.usdPerMillionReconciles,
  );
  row(
    '',
    'create → Ready and settled: history events',
    cost.homeostat.firstPasses.events,
    cost.rawTemporal.firstPasses.events,
  );
  row(
    '',
    'create → Ready and settled: actions',
    cost.homeostat.firstPasses.actions,
    cost.rawTemporal.firstPasses.actions,
  );

  const header = [
    'scenario',
    'metric',
    'homeostat',
    'raw Temporal (a)',
    'homeostat ÷ (a)',
    'in-process controller (b)',
    'homeostat ÷ (b)',
  ];
  const table = [header, header.map(() => '---'), ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
  const m = env.machine;
  const v = env.versions;
  return [
    `# homeostat benchmark (${result.size} size)`,
    '',
    `- date: ${env.date}, commit ${env.gitCommit}, scenarios took ${Math.round(result.durationSeconds)} s`,
    `- machine: ${m.cpuModel}, ${m.cores} cores, ${m.memGiB} GiB, ${m.os}; load average at start ${m.loadAverageAtStart.join(' / ')} (shared machine: timings are noisy)`,
    `- versions: Node ${v.node}, Temporal SDK ${v.temporalSdk}, Temporal CLI ${v.temporalCli} (server ${v.temporalServer}, SQLite), Kubernetes ${v.kubernetes}, etcd ${v.etcd}, @kubernetes/client-node ${v.kubernetesClientNode}`,
    '- all systems ran on one local stack (`devstack`), in one process, one after the other; every time is observed through a watch',
    '',
    table,
    '',
    `Ratios are homeostat ÷ baseline: above 1 homeostat takes more time, memory or money (for objects/s, below 1 it is slower). ` +
      `Price: ${cost.price.assumption}. Minimum per pass for N steps: 4 + 6N events, 1 + N actions. ` +
      `A steady pass is a reconcile request for an object already Ready (homeostat: observe + ${cost.steps} steps, status unchanged so not written; raw: ${cost.steps} steps + its status write). ` +
      `Storm updates went in at ${fmt(S.homeostat?.updatesPerSecond)}/s (homeostat run) and ${fmt(S.controller?.updatesPerSecond)}/s (controller run).`,
    '',
  ].join('\n');
}

/** Writes `<date>-<size>.json` and `.md` to `dir`, and `latest.md` (full size) or `latest-<size>.md`. */
export function writeResults(result: BenchResult, dir: string): { json: string; md: string; latest: string } {
  mkdirSync(dir, { recursive: true });
  const day = result.environment.date.slice(0, 10);
  const json = join(dir, `${day}-${result.size}.json`);
  const md = join(dir, `${day}-${result.size}.md`);
  const latest = join(dir, result.size === 'full' ? 'latest.md' : `latest-${result.size}.md`);
  const text = markdown(result);
  writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(md, text);
  writeFileSync(latest, text);
  return { json, md, latest };
}
