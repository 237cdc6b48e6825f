/**
 * The rollout errors: a stable code, the CLI's exit status and a sentence for the person running the
 * command; and Temporal's answers to deployment calls (a gRPC status and the server's message, server
 * 1.32 `service/worker/workerdeployment`) turned into them.
 *
 * These codes live here rather than in `core/errors.ts` because that catalog is part of the workflow
 * code's fingerprint (test/unit/workflow-code-version.test.ts) and rollouts never fail a workflow.
 */

/** The rollout error codes: what each means and the exit status `homeostat rollout` ends with. */
export const rolloutErrorCatalog = {
  /** An argument the command refuses (a ramp of 150 %, a build ID with `:`). */
  ERR_ROLLOUT_INPUT: { exitStatus: 2 },
  /**
   * Temporal or homeostat refused the routing change (no worker of the build has polled, a task queue
   * missing, an unknown deployment, a conflicting change twice, Temporal unreachable).
   */
  ERR_ROLLOUT_REFUSED: { exitStatus: 1 },
  /** The compatibility check found runs the candidate build cannot take over. */
  ERR_ROLLOUT_INCOMPATIBLE: { exitStatus: 1 },
  /** A version did not drain within the time allowed. */
  ERR_ROLLOUT_TIMEOUT: { exitStatus: 1 },
} as const satisfies Record<string, { exitStatus: 1 | 2 }>;

/** A code of {@link rolloutErrorCatalog}. */
export type RolloutErrorCode = keyof typeof rolloutErrorCatalog;

/** A rollout command's refusal: a stable code, a message that says what to do, a cause. */
export class RolloutError extends Error {
  override readonly name = 'RolloutError';
  readonly code: RolloutErrorCode;
  /** Extra data (the compatibility report, the server's gRPC code and message). */
  readonly details?: unknown;

  constructor(code: RolloutErrorCode, message: string, options: { cause?: unknown; details?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    if (options.details !== undefined) this.details = options.details;
  }
}

/** Whether a value is a {@link RolloutError}, by name and code (works across module registries). */
export function isRolloutError(err: unknown): err is RolloutError {
  return (
    typeof err === 'object' &&
    err !== null &&
    (err as { name?: unknown }).name === 'RolloutError' &&
    Object.hasOwn(rolloutErrorCatalog, String((err as { code?: unknown }).code))
  );
}

/** gRPC status codes the deployment calls answer with. */
const grpc = {
  invalidArgument: 3,
  deadlineExceeded: 4,
  notFound: 5,
  permissionDenied: 7,
  resourceExhausted: 8,
  failedPrecondition: 9,
  unavailable: 14,
} as const;

/** The gRPC status code and server message of an error from `client.workflowService`. */
export function grpcFailure(err: unknown): { code?: number; message: string } {
  const e = (typeof err === 'object' && err !== null ? err : {}) as {
    code?: unknown;
    details?: unknown;
    message?: unknown;
  };
  const message =
    typeof e.details === 'string' && e.details !== ''
      ? e.details
      : typeof e.message === 'string'
        ? e.message
        : String(err);
  return { ...(typeof e.code === 'number' ? { code: e.code } : {}), message };
}

/** Whether the server refused a routing change because the deployment changed since it was described. */
export function isConflictTokenMismatch(err: unknown): boolean {
  const { code, message } = grpcFailure(err);
  return code === grpc.failedPrecondition && /conflict token mismatch/i.test(message);
}

/** The sentence for a build whose workers never polled. */
export function noPollersMessage(buildId: string): string {
  return `no worker of build ${quoteShort(buildId)} has polled yet: start its workers first`;
}

/**
 * Maps an error of a deployment call to a rollout error; `buildId` names the version the call was
 * about, when there is one. A rollout error passes through.
 */
export function rolloutErrorFrom(
  err: unknown,
  target: { readonly namespace: string; readonly deploymentName: string },
  buildId?: string,
): RolloutError {
  if (isRolloutError(err)) return err;
  const { code, message } = grpcFailure(err);
  const deployment = `deployment ${quoteShort(target.deploymentName)} (namespace ${quoteShort(target.namespace)})`;
  const refused = (text: string): RolloutError =>
    new RolloutError('ERR_ROLLOUT_REFUSED', text, {
      cause: err,
      details: { grpcCode: code ?? null, server: message },
    });
  if (code === grpc.notFound) {
    if (/no Worker Deployment found/i.test(message) || /Worker Deployment not found/i.test(message)) {
      return refused(`no ${deployment}: no worker of it has polled yet (check --deployment and TEMPORAL_NAMESPACE)`);
    }
    if (buildId !== undefined && /not found/i.test(message))
      return refused(`${deployment}: ${noPollersMessage(buildId)}`);
    return refused(`${deployment}: ${message}`);
  }
  if (code === grpc.failedPrecondition) {
    if (/missing active task queues/i.test(message)) {
      return refused(
        `${deployment}: build ${quoteShort(buildId ?? '')} does not poll every task queue the current version polls: ` +
          `start its workers on all of them (the runs of a missing queue would become unversioned)`,
      );
    }
    if (/conflict token mismatch/i.test(message)) {
      return refused(
        `${deployment} changed twice while this command ran (someone else is changing its routing): try again`,
      );
    }
    if (/ManagerIdentity/i.test(message)) {
      return refused(`${deployment} is managed by another client (a Worker Controller?): ${message}`);
    }
    return refused(`${deployment}: ${message}`);
  }
  if (code === grpc.invalidArgument) {
    return new RolloutError('ERR_ROLLOUT_INPUT', `${deployment}: Temporal refused the request: ${message}`, {
      cause: err,
    });
  }
  if (code === grpc.resourceExhausted) {
    return refused(
      `${deployment}: Temporal is rate-limiting deployment calls; try again in a few seconds (${message})`,
    );
  }
  if (code === grpc.permissionDenied) return refused(`${deployment}: permission denied: ${message}`);
  if (code === grpc.unavailable || code === grpc.deadlineExceeded) {
    return refused(`Temporal did not answer (${message}): check TEMPORAL_ADDRESS and that the server runs`);
  }
  return refused(`${deployment}: ${message}`);
}

/** A value quoted for a message, cut to 60 characters (a hostile 100 kB argument is not echoed whole). */
export function quoteShort(value: string): string {
  return JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
}
