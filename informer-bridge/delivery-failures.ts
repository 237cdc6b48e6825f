/**
 * Which failed deliveries can never succeed. Temporal answers a request it will refuse whatever the
 * retry with `INVALID_ARGUMENT` (a workflow ID or name over `limit.maxIDLength`, a payload over the
 * blob size limit, a malformed search attribute) or `OUT_OF_RANGE`: retrying those every few seconds
 * for ever spends the shared queue and Temporal's rate limits on nothing. Everything else — the server
 * unavailable, a deadline, `RESOURCE_EXHAUSTED` (rate limits), a namespace not found or not active, an
 * error that is not Temporal's answer at all — may pass later and is retried.
 */
import { isGrpcServiceError } from '@temporalio/client';

/** gRPC status codes that mean "this request will never be accepted", by the reason they are counted under. */
const permanentCodes: ReadonlyMap<number, string> = new Map([
  [3, 'invalid_argument'],
  [11, 'out_of_range'],
]);

/**
 * Why a failed delivery can never succeed (`invalid_argument`, `out_of_range`), found on the error or
 * its causes (the client wraps Temporal's answer in a `ServiceError`); `undefined` when it may pass on
 * a retry.
 */
export function permanentDeliveryFailure(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 8 && e !== null && typeof e === 'object'; depth++) {
    if (isGrpcServiceError(e)) return permanentCodes.get(e.code);
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}
