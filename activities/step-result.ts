/**
 * A step's result as the workflow gets it: durations in milliseconds, and outputs, progressing message
 * and status fields checked (they are recorded in history and written to status).
 */
import type { StepActivityResult } from '../core/activity-contract';
import { durationMs } from '../core/plan';
import type { StepResult } from '../core/reconciler';
import { reservedStatusFields, statusFieldName } from '../core/status';
import { HomeostatError } from '../core/errors';

/** The largest `outputs` a step may return, as JSON. */
const maxStepOutputsBytes = 4096;

/** A step's result as the workflow gets it: durations in milliseconds, outputs checked for size. */
export function stepActivityResult(
  kind: string,
  step: string,
  result: StepResult,
  attempt: number,
): StepActivityResult {
  const { requeueAfter, requeueAfterMs, outputs, message, progressing, status } = result;
  const requeue = requeueAfter !== undefined ? durationMs(requeueAfter, 0) : requeueAfterMs;
  if (outputs !== undefined) {
    const size = Buffer.byteLength(JSON.stringify(outputs));
    if (size > maxStepOutputsBytes) {
      throw new HomeostatError(
        'ERR_STEP_TERMINAL',
        `${kind} step ${step} returned ${size} bytes of outputs; at most ${maxStepOutputsBytes} are allowed (they are recorded in history)`,
      );
    }
  }
  if (progressing !== undefined && (typeof progressing !== 'string' || progressing.length > maxProgressingLength)) {
    throw new HomeostatError(
      'ERR_STEP_TERMINAL',
      `${kind} step ${step} returned a progressing message that is not a string of at most ${maxProgressingLength} characters`,
    );
  }
  if (status !== undefined) {
    const problem = statusFieldsProblem(status);
    if (problem)
      throw new HomeostatError('ERR_STEP_TERMINAL', `${kind} step ${step} returned status fields: ${problem}`);
  }
  return {
    attempt,
    ...(message !== undefined ? { message } : {}),
    ...(requeue !== undefined ? { requeueAfterMs: requeue } : {}),
    ...(outputs !== undefined ? { outputs: outputs } : {}),
    ...(progressing !== undefined ? { progressing } : {}),
    ...(status !== undefined && Object.keys(status).length > 0 ? { status } : {}),
  };
}

/** The longest `progressing` message a step may return. */
const maxProgressingLength = 1024;

/**
 * What is wrong with a step's status fields, if anything: each a lowerCamelCase name that is not
 * homeostat's own, with a plain value (string, finite number, boolean), at most 4 KiB in all.
 */
export function statusFieldsProblem(fields: unknown): string | undefined {
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) return 'not an object of plain values';
  for (const [key, value] of Object.entries(fields)) {
    if (reservedStatusFields.has(key)) return `${key} is homeostat's own field`;
    if (!statusFieldName.test(key)) return `${JSON.stringify(key.slice(0, 80))} is not a lowerCamelCase field name`;
    const plain =
      typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
    if (!plain) return `${key} is not a string, finite number or boolean`;
  }
  const size = Buffer.byteLength(JSON.stringify(fields));
  if (size > maxStepOutputsBytes) return `${size} bytes; at most ${maxStepOutputsBytes} are allowed`;
  return undefined;
}
