/**
 * The state a run of the object workflow hands to the next at continue-as-new, as a versioned envelope.
 * Under Worker Deployment Versioning the envelope is written by one build and read by another: the new
 * build after an upgrade, an older build after a rollback. The rule (docs/upgrading.md):
 *
 * - fields are only ever added, and added fields are optional;
 * - a reader ignores the fields it does not know;
 * - a change that an older reader would misread (a field renamed, retyped, or given a new meaning)
 *   bumps {@link carriedStateFormat}, and a reader refuses a format it does not know.
 *
 * {@link readCarriedState} checks an envelope by hand (workflow code: no zod in the bundle) and throws a
 * {@link CarriedStateError} naming the field. `homeostat rollout`'s compatibility check runs the
 * candidate build's reader over every running object's envelope ({@link checkCarriedStates}) before a
 * promote.
 */
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { defineQuery } from '@temporalio/workflow';
import type { CarriedState } from './definitions';

/**
 * The envelope format this build writes, and the newest it reads. Envelopes written before the format
 * existed (no `format` field) have the same fields: format 1.
 */
export const carriedStateFormat = 1;

/** The formats this build reads. */
export const readableCarriedStateFormats: readonly number[] = [1];

/** Thrown by {@link readCarriedState}: the envelope cannot be read by this build; `field` names where. */
export class CarriedStateError extends Error {
  override readonly name = 'CarriedStateError';
  /** A stable code, for classification without `instanceof`. */
  readonly code = 'ERR_CARRIED_STATE';

  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`carried state: ${field}: ${message}`);
  }
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function check(ok: boolean, field: string, expected: string, value: unknown): void {
  if (!ok) throw new CarriedStateError(field, `expected ${expected}, got ${JSON.stringify(value) ?? String(value)}`);
}

const count = (v: unknown): boolean => Number.isInteger(v) && (v as number) >= 0;

function optional(state: Json, field: string, test: (v: unknown) => boolean, expected: string): void {
  const value = state[field];
  if (value !== undefined) check(test(value), field, expected, value);
}

/**
 * Reads a carried-state envelope written by any build: checks the fields this build relies on and
 * returns the envelope typed, unknown fields included (and ignored).
 *
 * @param formats the envelope formats the reader reads. @default this build's {@link readableCarriedStateFormats}
 * @throws CarriedStateError naming the field: a format this build does not read, a field of the wrong
 *   type, a required field missing.
 */
export function readCarriedState(
  value: unknown,
  formats: readonly number[] = readableCarriedStateFormats,
): CarriedState {
  check(isObject(value), '(envelope)', 'an object', value);
  const state = value as Json;
  const format = state.format ?? 1;
  check(Number.isInteger(format), 'format', 'a whole number', format);
  if (!formats.includes(format as number)) {
    throw new CarriedStateError(
      'format',
      `format ${JSON.stringify(format)} is not one this build reads (${formats.join(', ')}): ` +
        'it was written by a newer homeostat; roll back to it, or upgrade this one',
    );
  }
  check(count(state.passes), 'passes', 'a whole number ≥ 0', state.passes);
  check(count(state.runs), 'runs', 'a whole number ≥ 0', state.runs);
  optional(state, 'uid', (v) => typeof v === 'string', 'a string');
  optional(state, 'invalidGeneration', count, 'a whole number ≥ 0');
  optional(state, 'blockedBy', (v) => v === 'invalid' || v === 'terminal', "'invalid' or 'terminal'");
  optional(state, 'upgraded', (v) => typeof v === 'boolean', 'a boolean');
  optional(state, 'lastOutcome', isObject, 'an object');
  if (isObject(state.lastOutcome)) {
    check(count(state.lastOutcome.pass), 'lastOutcome.pass', 'a whole number ≥ 0', state.lastOutcome.pass);
    check(typeof state.lastOutcome.result === 'string', 'lastOutcome.result', 'a string', state.lastOutcome.result);
    check(typeof state.lastOutcome.phase === 'string', 'lastOutcome.phase', 'a string', state.lastOutcome.phase);
    check(isObject(state.lastOutcome.steps), 'lastOutcome.steps', 'an object', state.lastOutcome.steps);
  }
  optional(state, 'previous', isObject, 'an object');
  if (isObject(state.previous)) {
    for (const [step, result] of Object.entries(state.previous)) {
      check(isObject(result), `previous.${step}`, 'an object', result);
      const generation = (result as Json).generation;
      check(count(generation), `previous.${step}.generation`, 'a whole number ≥ 0', generation);
    }
  }
  optional(state, 'approvals', isObject, 'an object');
  if (isObject(state.approvals)) {
    const { granted, awaiting, decision } = state.approvals;
    if (granted !== undefined) check(isObject(granted), 'approvals.granted', 'an object', granted);
    for (const [step, g] of Object.entries(isObject(granted) ? granted : {})) {
      check(isObject(g) && count(g.generation), `approvals.granted.${step}.generation`, 'a whole number ≥ 0', g);
    }
    if (awaiting !== undefined) check(isObject(awaiting), 'approvals.awaiting', 'an object', awaiting);
    if (decision !== undefined) check(isObject(decision), 'approvals.decision', 'an object', decision);
  }
  optional(state, 'timer', isObject, 'an object');
  if (isObject(state.timer)) {
    const { kind, at } = state.timer;
    check(kind === 'requeue' || kind === 'drift', 'timer.kind', "'requeue' or 'drift'", kind);
    check(typeof at === 'number' && Number.isFinite(at), 'timer.at', 'a number (epoch milliseconds)', at);
  }
  return state as unknown as CarriedState;
}

/** One running object workflow's envelope, as the compatibility check collected it. */
export interface CollectedCarriedState {
  readonly workflowId: string;
  /** The envelope its run would carry now (the answer of {@link carriedStateQuery}). */
  readonly envelope: unknown;
}

/** The result of a compatibility check: how many envelopes were read, and which this build cannot read. */
export interface CompatibilityReport {
  readonly checked: number;
  readonly incompatible: readonly { readonly workflowId: string; readonly error: string }[];
}

/**
 * Reads every envelope with this build's {@link readCarriedState}: the compatibility gate of
 * `homeostat rollout ramp|promote`, run by the candidate version's workers over the envelopes the
 * current version's runs would carry.
 *
 * @param formats the envelope formats the reader reads. @default this build's {@link readableCarriedStateFormats}
 */
export function checkCarriedStates(
  envelopes: readonly CollectedCarriedState[],
  formats: readonly number[] = readableCarriedStateFormats,
): CompatibilityReport {
  const incompatible: { workflowId: string; error: string }[] = [];
  for (const { workflowId, envelope } of envelopes) {
    try {
      readCarriedState(envelope, formats);
    } catch (err) {
      incompatible.push({ workflowId, error: err instanceof Error ? err.message : String(err) });
    }
  }
  return { checked: envelopes.length, incompatible };
}

/**
 * Query: the carried-state envelope the run would hand to the next if it continued as new now (wire
 * name `carried-state`). Answered by the run's own (pinned) version.
 */
export const carriedStateQuery = defineQuery<CarriedState>('carried-state');

/** The input of the compatibility check (`compatibilityCheckWorkflow` and its activity). */
export interface CompatibilityCheckInput {
  /** The version whose running object workflows are checked (the deployment's Current version). */
  readonly currentVersion: WorkerDeploymentVersion;
  /** The most workflows checked. @default 1000 */
  readonly limit?: number;
}

/** The compatibility check's activity (activity type `checkCarriedStates`), run by the candidate's workers. */
export interface CompatibilityActivities {
  checkCarriedStates(input: CompatibilityCheckInput): Promise<CompatibilityReport>;
}

/** The workflow type of the compatibility check. */
export const compatibilityCheckWorkflowType = 'compatibilityCheckWorkflow';
