/**
 * Temporal's answers to deployment calls, turned into rollout errors that say what to do: a gRPC
 * status and the server's message (server 1.32 `service/worker/workerdeployment`) become
 * `ERR_ROLLOUT_INPUT` or `ERR_ROLLOUT_REFUSED` with a sentence for the person running the command.
 */
import { HomeostatError, isHomeostatError } from '../errors';
import { quoteShort } from './deployment-version';

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
): HomeostatError {
  if (isHomeostatError(err)) return err;
  const { code, message } = grpcFailure(err);
  const deployment = `deployment ${quoteShort(target.deploymentName)} (namespace ${quoteShort(target.namespace)})`;
  const refused = (text: string): HomeostatError =>
    new HomeostatError('ERR_ROLLOUT_REFUSED', text, {
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
    return new HomeostatError('ERR_ROLLOUT_INPUT', `${deployment}: Temporal refused the request: ${message}`, {
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
