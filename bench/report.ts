/** The benchmark's result: its JSON shape, the markdown table, and the files written. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Environment } from './machine';
import type { AtRestResult } from './scenarios/at-rest';
import type { BurstResult } from './scenarios/burst';
import type { CostResult } from './scenarios/cost';
import type { LatencyResult } from './scenarios/latency';
import type { MemoryResult } from './scenarios/memory';
import type { NoisyNeighbourResult } from './scenarios/noisy-neighbour';
import type { ScaleResult } from './scenarios/scale';
import { scaleMarkdown } from './scenarios/scale-report';
import type { StormResult } from './scenarios/storm';
import type { UpgradeResult } from './scenarios/upgrade';
import type { BenchSize, SizeName } from './sizes';
import { ratio, round } from './stats';
import type { SystemName, WorkerPlacement } from './systems';

/** Everything one run measured. */
export interface BenchResult {
  readonly size: SizeName;
  readonly parameters: BenchSize;
  /** Where the Temporal workers ran (results before it was recorded: in process). */
  readonly workers?: WorkerPlacement;
  /** The bridges' admission limits when the run set them (`--max-passes-in-flight…`); absent: the bridge's defaults. */
  readonly admission?: { readonly maxPassesInFlight?: number; readonly maxPassesInFlightPerNamespace?: number };
  readonly environment: Environment;
  /** Wall-clock time of the scenarios (stack start and bundling not included). */
  readonly durationSeconds: number;
  /** The scenarios run: all of them, unless the run asked for some ({@link BenchResult.only}). */
  readonly scenarios: {
    latency?: LatencyResult;
    burst?: BurstResult;
    storm?: StormResult;
    memory?: MemoryResult;
    cost?: CostResult;
    atRest?: AtRestResult;
    /** Scenario 7 (results before it existed have none). */
    noisyNeighbour?: NoisyNeighbourResult;
    /** Scenario 8 (results before it existed have none). */
    upgrade?: UpgradeResult;
    /** Scenario 9 (results before it existed have none). */
    scale?: ScaleResult;
  };
  /** Every pass traced to Jaeger (`--tracing`), and the services Jaeger received spans from. @default off */
  readonly tracing?: { readonly services: readonly string[] };
  /** The scenarios a partial run asked for (`npm run bench -- --only upgrade`). */
  readonly only?: readonly ScenarioName[];
}

/** A scenario's name in {@link BenchResult.scenarios} (and for `--only`). */
export type ScenarioName = keyof BenchResult['scenarios'];

/** Every scenario's name, in the order they are reported. */
export const scenarioNames: readonly ScenarioName[] = [
  'latency',
  'burst',
  'storm',
  'memory',
  'cost',
  'atRest',
  'noisyNeighbour',
  'upgrade',
  'scale',
];

const fmt = (x: number | undefined): string => (x === undefined || Number.isNaN(x) ? '—' : String(x));
const times = (a: number | undefined, b: number | undefined): string =>
  a === undefined || b === undefined ? '—' : `${fmt(ratio(a, b))}×`;

/** The result as markdown: a header with the environment, the table, and how to read it. */
export function markdown(result: BenchResult): string {
  const { latency, burst, storm, memory, cost, atRest } = result.scenarios;
  const env = result.environment;
  const rows: string[][] = [];
  /** A row: homeostat (local steps), homeostat (regular steps), raw Temporal (a), in-process controller (b). */
  const row = (scenario: string, metric: string, hs?: number, a?: number, b?: number, hsr?: number): void => {
    rows.push([scenario, metric, fmt(hs), fmt(hsr), fmt(a), times(hs, a), times(hsr, a), fmt(b), times(hs, b)]);
  };
  /** A row with a figure of every system, from a per-system record. */
  const every = (scenario: string, metric: string, of: (system: SystemName) => number): void =>
    row(scenario, metric, of('homeostat'), of('rawTemporal'), of('controller'), of('homeostatRegular'));
  if (latency) {
    const L = latency.systems;
    every(
      `1. Latency (${latency.objects} objects, one at a time)`,
      'create → Ready, median (ms)',
      (s) => L[s].medianMs,
    );
    every('', 'create → Ready, p99 (ms)', (s) => L[s].p99Ms);
  }
  if (burst) {
    const B = burst.systems;
    every(`2. Burst (${burst.objects} objects at once)`, 'all Ready (s)', (s) => round(B[s].totalMs / 1000, 2));
    every('', 'objects/s (higher is better)', (s) => B[s].objectsPerSecond);
    every('', 'per object create → Ready, median (ms)', (s) => B[s].latency.medianMs);
    every('', 'per object create → Ready, p99 (ms)', (s) => B[s].latency.p99Ms);
  }
  if (storm) {
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
  }
  if (memory) {
    row(
      `4. Memory (${memory.objects} objects)`,
      'cache holder RSS (MiB): bridge vs bare informer',
      memory.bridge.rssMiB,
      undefined,
      memory.informer.rssMiB,
    );
    row(
      '',
      'RSS before listing, modules loaded (MiB)',
      memory.bridge.idleRssMiB,
      undefined,
      memory.informer.idleRssMiB,
    );
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
  }
  if (cost) {
    const C = (of: (f: CostResult['homeostat']) => number): [number, number, undefined, number] => [
      of(cost.homeostat),
      of(cost.rawTemporal),
      undefined,
      of(cost.homeostatRegular),
    ];
    row(
      `5. Cost (${cost.steps} steps, ${cost.passes} steady passes)`,
      `history events per pass (regular activities: minimum ${cost.minimum.eventsPerPass})`,
      ...C((f) => f.eventsPerPass),
    );
    row(
      '',
      `actions per pass (regular activities: minimum ${cost.minimum.actionsPerPass})`,
      ...C((f) => f.actionsPerPass),
    );
    row(
      '',
      `USD per million reconciles (regular activities: minimum ${cost.minimum.usdPerMillionReconciles})`,
      ...C((f) => f.usdPerMillionReconciles),
    );
    row('', 'create → Ready and settled: history events', ...C((f) => f.firstPasses.events));
    row('', 'create → Ready and settled: actions', ...C((f) => f.firstPasses.actions));
  }
  if (atRest) {
    atRest.objects.forEach((o, i) => {
      const what = `${o.kind}, drift check every ${o.interval}${o.isDefault ? ' (default)' : ''}`;
      row(
        i === 0 ? '6. At rest (built-ins, idle, measured histories)' : '',
        `${what}: USD per object-month (${o.actions} actions in ${o.checks} checks over ${o.idleSeconds} s)`,
        o.usdPerObjectMonth,
      );
    });
  }

  const header = [
    'scenario',
    'metric',
    'homeostat (local steps)',
    'homeostat (regular steps)',
    'raw Temporal (a)',
    'local ÷ (a)',
    'regular ÷ (a)',
    'in-process controller (b)',
    'local ÷ (b)',
  ];
  const table = [header, header.map(() => '---'), ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
  const noisy = result.scenarios.noisyNeighbour;
  const noisyRows = noisy
    ? [
        ...(noisy.modes
          ? (['on', 'off'] as const).map((mode) => ({ steps: 'regular', mode, f: noisy.modes![mode] }))
          : []),
        ...(noisy.localSteps
          ? (['on', 'off'] as const).map((mode) => ({ steps: 'local', mode, f: noisy.localSteps![mode] }))
          : []),
        ...(noisy.floor ? [{ steps: 'local', mode: 'floor: A not reconciled', f: noisy.floor }] : []),
      ]
    : [];
  const noisyTable = noisy
    ? [
        `### 7. Noisy neighbour: team A creates ${noisy.floodObjects} objects at once; team B changes one object every second`,
        '',
        '| steps | fairness | B change → Ready without the flood, median / p99 (ms) | during the flood, median / p99 (ms) | p99 during ÷ without | A all Ready (s) |',
        '| --- | --- | --- | --- | --- | --- |',
        ...noisyRows.map(
          ({ steps, mode, f }) =>
            `| ${steps} | ${mode} | ${f.quiet.medianMs} / ${f.quiet.p99Ms} | ${f.flood.medianMs} / ${f.flood.p99Ms} | ${fmt(f.p99Ratio)}× | ${fmt(f.floodSeconds)} |`,
        ),
        '',
        ...(noisyRows.some((r) => r.f.floodStages)
          ? [
              "Where B's change waited during the flood, from B's workflow history (median / p99, ms): change → its signal in history (API server, watch, bridge), signal → workflow task started (task queue), task started → Ready seen (the pass), and inside the pass the time its activity tasks and later workflow tasks sat queued, the time its workflow tasks ran in the worker (local activities included) and its activities ran, and from its last workflow task to Ready seen (a local-steps pass writes its status before its one workflow task completes: its inside figures are 0).",
              '',
              '| steps | fairness | → signal | signal → task started | pass | activity tasks queued | later workflow tasks queued | workflow tasks running | activities running | last task → Ready seen |',
              '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
              ...noisyRows.flatMap(({ steps, mode, f }) => {
                const st = f.floodStages;
                if (!st) return [];
                const cell = (k: keyof typeof st) => `${st[k].medianMs} / ${st[k].p99Ms}`;
                return [
                  `| ${steps} | ${mode} | ${cell('toSignalMs')} | ${cell('workflowQueueMs')} | ${cell('passMs')} | ${cell('activityQueuedMs')} | ${cell('laterWorkflowTasksQueuedMs')} | ${cell('workflowTasksRunningMs')} | ${cell('activitiesRunningMs')} | ${cell('afterLastTaskMs')} |`,
                ];
              }),
              '',
            ]
          : []),
        'Fairness on: every workflow carries its namespace as Temporal fairness key and the bridge delivers round-robin across namespaces; off: `HOMEOSTAT_FAIRNESS=off`, one first-in, first-out backlog. One bridge for both teams, in a process of its own. Floor: A\'s objects created at the pace of the local-steps run with fairness on, outside the bridge\'s selector, so nothing reconciles them: what A\'s creation alone costs B on this machine (its "A all Ready" is A\'s creation time). Steps "regular": homeostat\'s regular-steps worker (each step an activity task); "local": its local-steps worker (the steps run as local activities inside observe, one workflow task per pass).',
        '',
      ].join('\n')
    : '';
  const m = env.machine;
  const v = env.versions;
  return [
    `# homeostat benchmark (${result.size} size)`,
    '',
    `- date: ${env.date}, commit ${env.gitCommit}, scenarios took ${Math.round(result.durationSeconds)} s`,
    `- machine: ${m.cpuModel}, ${m.cores} cores, ${m.memGiB} GiB, ${m.os}; load average at start ${m.loadAverageAtStart.join(' / ')} (shared machine: timings are noisy)`,
    ...(result.admission
      ? [
          `- bridge admission set for this run: ${result.admission.maxPassesInFlight ?? 'default'} passes in flight, ${result.admission.maxPassesInFlightPerNamespace ?? 'default'} per namespace`,
        ]
      : []),
    `- versions: Node ${v.node}, Temporal SDK ${v.temporalSdk}, Temporal dev server ${v.temporalCli} (server ${v.temporalServer}, SQLite), Kubernetes ${v.kubernetes}, etcd ${v.etcd}, @kubernetes/client-node ${v.kubernetesClientNode}`,
    `- all systems ran on one local stack (\`devstack\`), one after the other; ${
      (result.workers ?? 'in-process') === 'processes'
        ? 'each Temporal worker in a process of its own (as deployed), and the noisy-neighbour and scale scenarios’ bridges; the other bridges, signals, controllers and Ready watches in the benchmark’s process'
        : 'the Temporal workers, bridges, signals, controllers and Ready watches all in one process'
    }; every time is observed through a watch`,
    ...(result.tracing
      ? [
          `- tracing on: every pass traced (OTLP/HTTP to a local Jaeger, sampler parentbased_always_on); Jaeger received spans from ${result.tracing.services.join(', ') || 'no service'}`,
        ]
      : []),
    '',
    ...(rows.length ? [table, ''] : []),
    ...(noisyTable ? [noisyTable] : []),
    ...(result.scenarios.upgrade ? [upgradeSection(result.scenarios.upgrade)] : []),
    ...(rows.length ? [notes(result)] : []),
    ...(result.scenarios.scale ? [scaleMarkdown(result.scenarios.scale)] : []),
    '',
  ].join('\n');
}

/** How to read the main table's figures (the scenarios it holds). */
function notes(result: BenchResult): string {
  const { storm, cost, atRest } = result.scenarios;
  const S = storm?.systems;
  return [
    `Ratios are homeostat ÷ baseline: above 1 homeostat takes more time, memory or money (for objects/s, below 1 it is slower). `,
    cost
      ? `Price: ${cost.price.assumption}. Minimum per pass for N steps as regular activities: 4 + 6N events, 1 + N actions (local activities: a signal and one workflow task of markers, 2 actions). ` +
        `A steady pass is a reconcile request for an object already Ready (homeostat: observe + ${cost.steps} steps, status unchanged so not written; raw: ${cost.steps} steps + its status write). `
      : '',
    S
      ? `Storm updates went in at ${fmt(S.homeostat?.updatesPerSecond)}/s (homeostat run) and ${fmt(S.controller?.updatesPerSecond)}/s (controller run). `
      : '',
    `homeostat (local steps) runs the bench reconciler's steps, observe and the status write as local activities; (regular steps) runs the steps as regular activities (observe and status still local). `,
    atRest
      ? `At rest: each built-in object idled beside the other scenarios and was measured over whole drift-check cycles of its real history (timer armed → checks → next timer armed, continue-as-new included); actions counted with the rule above, scaled to a 30-day month; the in-process controller's resync costs no Temporal actions.`
      : '',
    '',
  ].join('');
}

/** Scenario 8's section: one row per promote. */
function upgradeSection(up: UpgradeResult): string {
  return [
    `### 8. Upgrade: ${up.objects} objects move to a new operator version (Worker Deployment Versioning)`,
    '',
    '| promote | how objects move | promote call, check included (s) | promote → all on the new plan (s) | per object median / p99 (s) | actions per object | history events per object | promote → old version drained (s) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...up.moves.map((m) => {
      const how =
        m.how === 'wake'
          ? `at once: \`--wake\` (${m.wake?.signalled ?? 0} signals at ${m.wake?.ratePerSecond ?? 0}/s in ${fmt(m.wake?.seconds)} s, ${m.wake?.queried ?? 0} queries, ${m.wake?.failed ?? 0} failed)`
          : `at its next drift check (every ${up.driftInterval})`;
      return `| v${m.from} → v${m.to} | ${how} | ${fmt(m.promoteSeconds)} | ${fmt(m.allMovedSeconds)} | ${fmt(round(m.perObject.medianMs / 1000, 2))} / ${fmt(round(m.perObject.p99Ms / 1000, 2))} | ${fmt(m.actionsPerObject)} | ${fmt(m.eventsPerObject)} | ${fmt(m.drainedSeconds)} |`;
    }),
    '',
    `Each version is a process of its own (homeostat's worker, the bench reconciler's local no-op steps; v2 and v3 add one step each). ` +
      `Promote runs the compatibility check on the new version's workers first, as \`homeostat rollout promote\` does. ` +
      `Objects are PINNED: each continues as new onto the new version between passes and runs its plan at once. "On the new plan" is the watch event showing the new step's condition. ` +
      `Actions are counted from every run's history between the promote and the last move (the drift row includes the drift check each object would have had anyway), plus the wake's billable \`state\` queries. ` +
      `Workflow task failures in all runs: ${up.workflowTaskFailures} (${up.handedBack} tasks handed back because a signal raced a continue-as-new, Temporal's own retry); ${up.runs} runs.`,
    '',
  ].join('\n');
}

/**
 * Writes `<date>-<size>.json` and `.md` to `dir`, and `latest.md` (full size) or `latest-<size>.md`;
 * a run of some scenarios only (`--only`) adds their names: `<date>-<size>-<names>.json`,
 * `latest-<names>.md` (`latest-<size>-<names>.md` at the small size).
 */
export function writeResults(result: BenchResult, dir: string): { json: string; md: string; latest: string } {
  mkdirSync(dir, { recursive: true });
  const day = result.environment.date.slice(0, 10);
  const part = result.only ? `-${result.only.join('-')}` : '';
  const json = join(dir, `${day}-${result.size}${part}.json`);
  const md = join(dir, `${day}-${result.size}${part}.md`);
  const latest = join(dir, result.size === 'full' ? `latest${part}.md` : `latest-${result.size}${part}.md`);
  const text = markdown(result);
  writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(md, text);
  writeFileSync(latest, text);
  return { json, md, latest };
}
