/**
 * Waiting in tests: polling with a deadline that fails loudly, and reading an object's conditions
 * wherever homeostat writes them (`status.conditions` of a kind it defines, the
 * `homeostat.dev/conditions` annotation of a kind it does not, such as `Namespace`).
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { statusAnnotations } from '../core/status';

/** Options of {@link waitFor}. */
export interface WaitOptions {
  /** Give up after this long, failing. @default 60_000 */
  readonly timeoutMs?: number;
  /** Time between two checks. @default 250 */
  readonly intervalMs?: number;
  /**
   * What is awaited, for the failure message: a text, or a function called once on timeout (to
   * describe the last state seen). @default 'the condition'
   */
  readonly what?: string | (() => string);
}

/** A truthy value: what {@link waitFor} resolves with. */
export type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Calls `check` until it returns a truthy value and resolves with that value. A `check` that throws
 * counts as "not yet" (an object not created yet answers 404). When the time is up it rejects with
 * what was awaited, the last value and the last error: a wait that ran out is a failure, never a
 * quiet return.
 *
 * @example
 * ```ts
 * const ns = await waitFor(() => env.get({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'acme' } }));
 * ```
 */
export async function waitFor<T>(check: () => T | Promise<T>, options: WaitOptions = {}): Promise<Truthy<T>> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  let lastValue: unknown;
  let lastError: unknown;
  for (;;) {
    try {
      lastValue = await check();
      lastError = undefined;
      if (lastValue) return lastValue as Truthy<T>;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const what = typeof options.what === 'function' ? options.what() : (options.what ?? 'the condition');
      const last =
        lastError !== undefined
          ? `last error: ${lastError instanceof Error ? lastError.message : JSON.stringify(lastError)}`
          : `last value: ${JSON.stringify(lastValue)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${last})`);
    }
    await sleep(options.intervalMs ?? 250);
  }
}

/** A condition in the `metav1.Condition` shape, as homeostat writes them. */
export interface Condition {
  readonly type: string;
  /** `True`, `False` or `Unknown`. */
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
  readonly observedGeneration?: number;
  readonly lastTransitionTime?: string;
}

/** The parts of an object that carry homeostat's status. */
export type WithStatus = KubernetesObject & {
  readonly status?: {
    /** The generation the status describes: the last one a pass finished with. */
    readonly observedGeneration?: number;
    readonly phase?: string;
    readonly conditions?: readonly Condition[];
  };
};

/**
 * An object's conditions: `status.conditions`, else the `homeostat.dev/conditions` annotation (kinds
 * homeostat does not define, whose status belongs to someone else). `[]` when there are none.
 */
export function conditionsOf(object: WithStatus | undefined): readonly Condition[] {
  if (!object) return [];
  const conditions: unknown = object.status?.conditions;
  if (Array.isArray(conditions)) return conditions as Condition[];
  const annotation = object.metadata?.annotations?.[statusAnnotations.conditions];
  if (!annotation) return [];
  try {
    const parsed = JSON.parse(annotation) as unknown;
    return Array.isArray(parsed) ? (parsed as Condition[]) : [];
  } catch {
    return [];
  }
}

/** An object's phase: `status.phase`, else the `homeostat.dev/phase` annotation. */
export function phaseOf(object: WithStatus | undefined): string | undefined {
  return object?.status?.phase ?? object?.metadata?.annotations?.[statusAnnotations.phase];
}

/**
 * The generation an object's homeostat status describes: `status.observedGeneration`, else the
 * `homeostat.dev/observed-generation` annotation.
 */
export function observedGenerationOf(object: WithStatus | undefined): number | undefined {
  const observed = object?.status?.observedGeneration;
  if (typeof observed === 'number') return observed;
  const annotated = Number(object?.metadata?.annotations?.[statusAnnotations.observedGeneration] ?? Number.NaN);
  return Number.isInteger(annotated) ? annotated : undefined;
}

/** A one-line summary of an object's homeostat status, for failure messages. */
export function describeStatus(object: WithStatus | undefined): string {
  if (!object) return 'the object does not exist';
  const conditions = conditionsOf(object)
    .map((c) => `${c.type}=${c.status}${c.reason ? ` ${c.reason}` : ''}${c.message ? `: ${c.message}` : ''}`)
    .join('; ');
  const observed = observedGenerationOf(object);
  const generation = object.metadata?.generation;
  const generations =
    observed !== undefined || generation !== undefined
      ? `, observedGeneration ${observed ?? '(none)'} of generation ${generation ?? '(none)'}`
      : '';
  return `phase ${phaseOf(object) ?? '(none)'}, conditions [${conditions}]${generations}`;
}
