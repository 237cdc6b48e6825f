/**
 * What the workflow reads of an activity failure: its message, type, retryability and details, by
 * property (classes do not survive the workflow sandbox, so never `instanceof`).
 */

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
