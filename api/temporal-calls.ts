/**
 * Calls from the API to Temporal: each with a deadline, so a slow or unreachable frontend answers 504
 * rather than a hang, and the gRPC status of what failed, so it can be answered as a problem.
 */
import type { Client } from '@temporalio/client';

/** gRPC `DEADLINE_EXCEEDED`: the call's deadline passed. */
export const grpcDeadlineExceeded = 4;
/** gRPC `UNAVAILABLE`: the frontend is unreachable. */
export const grpcUnavailable = 14;
/**
 * gRPC `FAILED_PRECONDITION`: for a query, Temporal's "no poller seen for task queue recently, worker
 * may be down" — no worker is there to answer it.
 */
export const grpcFailedPrecondition = 9;

/** The gRPC status code of a Temporal client error (on it or its cause), if it has one. */
export function temporalStatus(err: unknown): number | undefined {
  for (let e = err, i = 0; typeof e === 'object' && e !== null && i < 4; e = (e as { cause?: unknown }).cause, i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'number') return code;
  }
  return undefined;
}

/**
 * Whether `err` is Temporal's refusal of an update whose workflow task failed on the server ("Unable to
 * perform workflow execution update due to unexpected workflow task failure", `FAILED_PRECONDITION`):
 * the update was dropped with the task, nothing was decided, and the workflow goes on as before it came.
 */
export function isDroppedWithItsTask(err: unknown): boolean {
  if (temporalStatus(err) !== grpcFailedPrecondition) return false;
  for (let e = err, i = 0; e instanceof Error && i < 4; e = e.cause, i++) {
    if (/unexpected workflow task failure/i.test(e.message)) return true;
  }
  return false;
}

/** Runs a call to Temporal under a deadline of `ms` (or the default one). */
export type TemporalCall = <R>(fn: () => Promise<R>, ms?: number) => Promise<R>;

/** Calls through `temporal`'s connection with a deadline of `defaultMs` unless the call names its own. */
export function temporalCaller(temporal: Client, defaultMs: number): TemporalCall {
  return (fn, ms = defaultMs) => temporal.connection.withDeadline(Date.now() + ms, fn);
}
