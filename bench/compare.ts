/**
 * `npm run bench:compare -- LABEL=results.json …`: the latency and burst rows of several runs side by
 * side, homeostat's (local and regular steps), each with its ratio to the first run. Made for runs one
 * after the other on the same machine that differ in one thing — tracing off and on (issue 30), the
 * code before and after a change: two runs of the same code beside them give the run-to-run noise the
 * others are read against (the table's last column: the largest spread between runs whose labels share
 * the part before a `#`, such as `off#1` and `off#2`).
 */
import { readFileSync } from 'node:fs';
import type { BenchResult } from './report';
import { round } from './stats';

/** One run to compare: its label and its result. */
export interface LabelledResult {
  readonly label: string;
  readonly result: BenchResult;
}

/** A metric read from a run: undefined when the run did not measure it. */
interface Metric {
  readonly name: string;
  readonly read: (r: BenchResult) => number | undefined;
}

const systems = [
  ['homeostat', 'local steps'],
  ['homeostatRegular', 'regular steps'],
] as const;

const metrics: readonly Metric[] = systems.flatMap(([system, what]) => [
  { name: `latency, ${what}: median (ms)`, read: (r) => r.scenarios.latency?.systems[system]?.medianMs },
  { name: `latency, ${what}: p99 (ms)`, read: (r) => r.scenarios.latency?.systems[system]?.p99Ms },
  {
    name: `burst, ${what}: all Ready (s)`,
    read: (r) => {
      const ms = r.scenarios.burst?.systems[system]?.totalMs;
      return ms === undefined ? undefined : round(ms / 1000, 2);
    },
  },
  { name: `burst, ${what}: objects/s`, read: (r) => r.scenarios.burst?.systems[system]?.objectsPerSecond },
  { name: `burst, ${what}: median (ms)`, read: (r) => r.scenarios.burst?.systems[system]?.latency.medianMs },
  { name: `burst, ${what}: p99 (ms)`, read: (r) => r.scenarios.burst?.systems[system]?.latency.p99Ms },
]);

/** The group of a label: the part before `#` (`off#2` → `off`). */
const groupOf = (label: string): string => label.split('#')[0]!;

/**
 * The markdown table comparing `runs`: a row per metric, a column per run (its value, and its ratio to
 * the first run's), and the largest relative spread within a group of runs of the same label (`—` when
 * no group has two runs).
 */
export function compareMarkdown(runs: readonly LabelledResult[]): string {
  if (runs.length === 0) throw new Error('nothing to compare: give LABEL=results.json for each run');
  const head = `| metric | ${runs.map((r) => r.label).join(' | ')} | run-to-run spread |`;
  const rule = `| --- |${runs.map(() => ' --- |').join('')} --- |`;
  const rows = metrics.map((m) => {
    const values = runs.map((r) => m.read(r.result));
    const first = values[0];
    const cells = values.map((v, i) =>
      v === undefined ? '—' : i === 0 || !first ? String(v) : `${v} (${round(v / first, 2)}×)`,
    );
    return `| ${m.name} | ${cells.join(' | ')} | ${spread(runs, values)} |`;
  });
  return [head, rule, ...rows].join('\n');
}

/** The largest (max − min) ÷ min within a group of runs with the same label, as a percentage. */
function spread(runs: readonly LabelledResult[], values: readonly (number | undefined)[]): string {
  const groups = new Map<string, number[]>();
  runs.forEach((r, i) => {
    const v = values[i];
    if (v === undefined) return;
    const g = groupOf(r.label);
    groups.set(g, [...(groups.get(g) ?? []), v]);
  });
  let widest: number | undefined;
  for (const vs of groups.values()) {
    if (vs.length < 2) continue;
    const lo = Math.min(...vs);
    const s = lo > 0 ? (Math.max(...vs) - lo) / lo : 0;
    widest = widest === undefined ? s : Math.max(widest, s);
  }
  return widest === undefined ? '—' : `${round(widest * 100, 1)}%`;
}

/** Reads `LABEL=path` arguments into labelled results. */
export function readRuns(args: readonly string[]): LabelledResult[] {
  return args.map((arg) => {
    const at = arg.indexOf('=');
    if (at <= 0) throw new Error(`expected LABEL=results.json, not ${arg}`);
    const result = JSON.parse(readFileSync(arg.slice(at + 1), 'utf8')) as BenchResult;
    return { label: arg.slice(0, at), result };
  });
}

if (require.main === module) {
  try {
    process.stdout.write(`${compareMarkdown(readRuns(process.argv.slice(2)))}\n`);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
}
