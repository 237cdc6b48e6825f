/**
 * The end of every fault: wait for convergence, verify PostgreSQL, delete the objects, check that the
 * processes that were not killed on purpose are still the same ones, print one summary line, and
 * only then assert (so a failing fault still reports what it saw).
 */
import type { Databases } from './databases';
import type { HomeostatProcess } from './processes';

/** What a fault reports besides the common checks (e.g. `conflicts=12`). */
export type Extra = Record<string, string | number>;

/** The common checks of one fault, in the shape of its summary line. */
export interface FaultOutcome {
  readonly line: string;
  readonly problems: string[];
}

/**
 * Checks `dbs` after a fault and prints `fault=… objects=… reps=… converged=…/… pgEffects=… finalizers=…
 * survivors=…` with `extra`. `survivors` are the processes that must have lived through the fault
 * (nobody restarted them). Throws, after printing, when a check fails.
 */
export async function finishFault(options: {
  fault: string;
  reps: number;
  dbs: Databases;
  survivors: HomeostatProcess[];
  startedAt: number;
  extra?: Extra;
}): Promise<FaultOutcome> {
  const { fault, reps, dbs, survivors, startedAt, extra = {} } = options;
  const problems: string[] = [];
  await dbs.waitConverged().catch((err: Error) => problems.push(err.message));
  if (dbs.invalidNames.length) await dbs.waitInvalid().catch((err: Error) => problems.push(err.message));
  const verdict = await dbs.verify();
  problems.push(...verdict.problems);
  const alive = survivors.filter((p) => !p.gone).length;
  if (alive !== survivors.length) problems.push(`${survivors.length - alive} process(es) died and needed a restart`);
  const { stuck, leftInPostgres } = await dbs.deleteAll();
  if (stuck.length) problems.push(`finalizers stuck: ${stuck.join(', ')}`);
  if (leftInPostgres.length) problems.push(`not dropped after deletion: ${leftInPostgres.join(', ')}`);
  const fields: Extra = {
    fault,
    objects: verdict.objects,
    reps,
    converged: `${verdict.converged}/${verdict.objects}`,
    pgEffects: verdict.exactlyOnce === verdict.objects ? 'exactly-once' : `${verdict.exactlyOnce}/${verdict.objects}`,
    ...(verdict.invalid ? { invalid: `${verdict.invalidReported}/${verdict.invalid}` } : {}),
    finalizers: stuck.length === 0 ? 'clear' : `stuck:${stuck.length}`,
    dropped: leftInPostgres.length === 0 ? 'all' : `left:${leftInPostgres.length}`,
    survivors: `${alive}/${survivors.length}`,
    ...extra,
    seconds: Math.round((Date.now() - startedAt) / 1000),
  };
  const line = Object.entries(fields)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  process.stdout.write(`${line}\n`);
  if (problems.length) throw new Error(`fault ${fault} failed:\n  ${problems.join('\n  ')}`);
  return { line, problems };
}
