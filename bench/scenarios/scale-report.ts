/** The scale scenario's table in the benchmark's markdown: homeostat and the in-process controller, with the ratio. */
import { durationMs } from '../../core/plan';
import { benchDriftPlan } from '../reconciler';
import { ratio } from '../stats';
import type { ProcessCpu, ScaleResult } from './scale';

const fmt = (x: number | undefined): string => (x === undefined || Number.isNaN(x) ? '—' : String(x));

/** The section of {@link ScaleResult}: one row per figure, homeostat ÷ controller where both have one. */
export function scaleMarkdown(scale: ScaleResult): string {
  const { homeostat: h, controller: c } = scale;
  const rows: string[] = [];
  const row = (step: string, metric: string, hs?: number, b?: number): void => {
    const times = hs === undefined || b === undefined ? '—' : `${fmt(ratio(hs, b))}×`;
    rows.push(`| ${step} | ${metric} | ${fmt(hs)} | ${fmt(b)} | ${times} |`);
  };
  const perK = (cpu: Record<string, ProcessCpu>, name: string): number | undefined =>
    cpu[name]?.cpuSecondsPerMinutePer1000;
  row('1. create all at once', 'all Ready (s)', h.create.allReadySeconds, c.create.allReadySeconds);
  row('', 'objects/s', h.create.objectsPerSecond, c.create.objectsPerSecond);
  row('', 'create → Ready, median (ms)', h.create.latency.medianMs, c.create.latency.medianMs);
  row('', 'create → Ready, p99 (ms)', h.create.latency.p99Ms, c.create.latency.p99Ms);
  row(
    `2. at rest (${h.rest.seconds} s, no drift check due)`,
    'own processes, % of one core per 1,000 objects (homeostat: worker + bridge; controller: its process)',
    h.rest.percentCorePer1000,
    c.rest.percentCorePer1000,
  );
  // The whole processes' CPU: most of it at small sizes is what a process costs with nothing to do.
  const whole: [string, string | undefined][] = [
    ['worker (controller: its process)', 'bench'],
    ['bridge', undefined],
    ['temporal', 'temporal'],
    ['kube-apiserver', 'kube-apiserver'],
  ];
  for (const [label, theirs] of whole) {
    const name = label.split(' ')[0]!;
    row(
      '',
      `CPU s/min, whole process: ${label}`,
      h.rest.cpu[name]?.cpuSecondsPerMinute,
      theirs ? c.rest.cpu[theirs]?.cpuSecondsPerMinute : undefined,
    );
  }
  row('', 'CPU s/min per 1,000 objects: worker', perK(h.rest.cpu, 'worker'));
  row('', 'CPU s/min per 1,000 objects: bridge', perK(h.rest.cpu, 'bridge'));
  for (const server of ['temporal', 'kube-apiserver', 'etcd']) {
    row('', `CPU s/min per 1,000 objects: ${server}`, perK(h.rest.cpu, server), perK(c.rest.cpu, server));
  }
  row('', `RSS (MiB): worker (${h.memory.workerCached} workflows cached)`, h.memory.workerRssMiB);
  row(
    '',
    `RSS (MiB): bridge (${h.memory.bridgeCached} objects cached); controller: the bench process`,
    h.memory.bridgeRssMiB,
    c.benchRssMiB,
  );
  row('', 'Temporal actions/s per 10,000 objects', h.rest.actionsPerSecondPer10000, 0);
  row(
    '3. restart of every process',
    'kill → every object confirmed in line (s)',
    h.restart.confirmedSeconds,
    c.restart.confirmedSeconds,
  );
  row('', 'passes run for unchanged objects', h.restart.history.passes, c.restart.history.passes);
  row('', 'Temporal actions per unchanged object', h.restart.actionsPerObject, 0);
  row('', 'signals sent / workflows started by the audit', h.restart.signalsSent + h.restart.auditStarts);
  row(
    `4. 1% changed (${h.change.objects} objects)`,
    'change → Ready, median (ms)',
    h.change.latency.medianMs,
    c.change.latency.medianMs,
  );
  row('', 'change → Ready, p99 (ms)', h.change.latency.p99Ms, c.change.latency.p99Ms);
  const d = h.drift;
  row(
    `5. drift checks every ${d.interval} on ${d.objectsChecked} objects (${d.seconds} s)`,
    'drift timers fired',
    d.history.checks,
    undefined,
  );
  row(
    '',
    `drift checks per second (the 30-minute default: ${round2((scale.objects * 1000) / durationMs(benchDriftPlan.driftCheckInterval, 0))})`,
    d.checksPerSecond,
  );
  row('', 'passes run (checks, and annotation passes left over)', d.history.passes);
  row('', 'actions per pass', d.actionsPerCheck);
  row('', 'CPU ms per pass: worker + bridge', round2((d.cpuMsPerCheck.worker ?? 0) + (d.cpuMsPerCheck.bridge ?? 0)));
  const byThread = d.workerMsPerCheckByThread ?? {};
  if (Object.keys(byThread).length) {
    const names: Record<string, string> = {
      main: 'main thread',
      workflow: 'workflow thread',
      rustCore: 'SDK Core (Rust)',
      v8Helpers: 'V8 helpers (GC, compilers)',
      libuv: 'libuv pool',
      shortLived: 'ended threads (sandbox watchdogs)',
      other: 'other',
    };
    const parts = Object.entries(byThread)
      .filter(([, ms]) => Math.abs(ms) >= 0.05)
      .sort((a, b) => b[1] - a[1])
      .map(([g, ms]) => `${names[g] ?? g} ${ms}`);
    rows.push(`|  | CPU ms per pass, the worker by thread | ${parts.join('; ')} | — | — |`);
  }
  row(
    '',
    'CPU ms per pass: Temporal + kube-apiserver + etcd',
    round2(['temporal', 'kube-apiserver', 'etcd'].reduce((s, n) => s + (d.cpuMsPerCheck[n] ?? 0), 0)),
  );
  row('', 'at the 30-minute default: actions/s per 10,000 objects', d.atDefault.actionsPerSecondPer10000, 0);
  row(
    '',
    'at the 30-minute default: % of one core per 1,000 objects (worker + bridge)',
    d.atDefault.percentCorePer1000,
    c.rest.percentCorePer1000,
  );
  return [
    `### 9. Scale: ${scale.objects} objects in ${scale.namespaces} namespaces`,
    '',
    '| step | metric | homeostat | in-process controller (b) | homeostat ÷ (b) |',
    '| --- | --- | --- | --- | --- |',
    ...rows,
    '',
    'homeostat: its worker and its bridge each in a process of its own, CPU and RSS read from /proc; the objects on the bench plan with a 30-minute drift check (local steps). ' +
      'Confirmed in line: the new bridge has listed every object and finished its first audit of their workflows with no request left to deliver. ' +
      'The controller has no drift check; its process is the benchmark’s (its informers, queues and the Ready watches). ' +
      'Step 5 puts a share of the objects on a short interval, one after the other, so checks fall in the window at the rate the default gives all of them; the default-interval rows are the rest window plus checks/s × the cost per check above it.',
    '',
  ].join('\n');
}

const round2 = (x: number): number => Number(x.toFixed(2));
