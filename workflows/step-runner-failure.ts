/**
 * What the workflow reads of an activity failure: its message, type, retryability and details, by
 * property (classes do not survive the workflow sandbox, so never `instanceof`).
 */

import { terminalFailureTypes } from '../core/errors';

/** Failure fields the workflow reads, by property (not instanceof). */
export interface FailureLike {
  readonly message?: string;
  readonly type?: string;
  readonly nonRetryable?: boolean;
  readonly details?: readonly unknown[];
  readonly cause?: FailureLike;
}

/** The innermost failure with a type (ApplicationFailure), or the error itself. */
export function appFailure(err: unknown): FailureLike {
  let f = err as FailureLike | undefined;
  while (f?.cause && f.type === undefined) f = f.cause;
  return f ?? {};
}

/**
 * Whether retrying cannot help: the activity said so (non-retryable), or its type is one of homeostat's
 * terminal types or of `extraTypes` (a step's own `nonRetryableErrorTypes`).
 */
export function isTerminalFailure(failure: FailureLike, extraTypes: readonly string[] = []): boolean {
  const type = failure.type ?? '';
  return failure.nonRetryable === true || terminalFailureTypes.includes(type) || extraTypes.includes(type);
}

/** When the failure asks to be retried (a Retry-After the activity put in its first detail), in ms. */
export function retryAfterOf(failure: FailureLike): number | undefined {
  const detail = (failure.details?.[0] ?? {}) as { retryAfterMs?: unknown };
  return typeof detail.retryAfterMs === 'number' ? detail.retryAfterMs : undefined;
}
