/**
 * The error catalog: every error homeostat raises has a stable code, a Temporal failure type and a
 * retry class. Errors are classified by their `code`, never with `instanceof` (which breaks across
 * jest module registries and the workflow sandbox).
 */
import { ApplicationFailure } from '@temporalio/common';
import { durationMs } from './plan';

/** The catalog: code → failure type, and whether Temporal may retry it. */
export const errorCatalog = {
  /** The object's spec does not match the reconciler's schema: not retried until the spec changes. */
  ERR_INVALID_SPEC: { type: 'InvalidSpec', retryable: false },
  /** A step reported a failure that retrying cannot fix. */
  ERR_STEP_TERMINAL: { type: 'TerminalStepError', retryable: false },
  /** A step failed in an ordinary way (retried with backoff). */
  ERR_STEP_FAILED: { type: 'StepFailed', retryable: true },
  /** No reconciler is registered for the object's kind. */
  ERR_UNKNOWN_KIND: { type: 'UnknownKind', retryable: false },
  /** 409: the object changed since it was read (resourceVersion precondition) or already exists. */
  ERR_K8S_CONFLICT: { type: 'KubernetesConflict', retryable: true },
  /** 404. */
  ERR_K8S_NOT_FOUND: { type: 'KubernetesNotFound', retryable: true },
  /** 410: a stale resourceVersion (or an expired continue token: the bridge relists). */
  ERR_K8S_GONE: { type: 'KubernetesGone', retryable: true },
  /** 429: throttled; Retry-After becomes the next retry delay. */
  ERR_K8S_THROTTLED: { type: 'KubernetesThrottled', retryable: true },
  /** 5xx: the API server is unavailable; Retry-After becomes the next retry delay. */
  ERR_K8S_UNAVAILABLE: { type: 'KubernetesUnavailable', retryable: true },
  /** 401/403: retried, because credentials and RBAC can be fixed without a spec change. */
  ERR_K8S_FORBIDDEN: { type: 'KubernetesForbidden', retryable: true },
  /** 400/405/415/422: the request itself is wrong; sending it again cannot help. */
  ERR_K8S_REJECTED: { type: 'KubernetesRejected', retryable: false },
  /** The API server could not be reached. */
  ERR_NETWORK: { type: 'NetworkError', retryable: true },
  /**
   * The step would take over something homeostat did not create for this object (an unowned child, a
   * pre-existing role or database, another object's resource): refused, not retried with backoff, and
   * re-checked at the plan's drift interval so the refusal clears when the conflict goes.
   */
  ERR_ADOPTION_REFUSED: { type: 'AdoptionRefused', retryable: false },
  /**
   * A payload could not be decrypted (its key id is not configured, or it was altered) or the payload
   * keys are invalid: a configuration problem, not something a retry fixes.
   */
  ERR_PAYLOAD_CODEC: { type: 'PayloadCodecError', retryable: false },
  /** The bridge's watch saw no event (not even a bookmark) for its inactivity timeout: it restarts. */
  ERR_WATCHDOG: { type: 'WatchInactive', retryable: true },
  /** A request of the bridge's own HTTP client failed (an HTTP status, or the transport). */
  ERR_KUBE_REQUEST: { type: 'KubernetesRequestFailed', retryable: true },
  /** API discovery cannot name a kind's resource (the API server does not serve it). */
  ERR_DISCOVERY: { type: 'DiscoveryFailed', retryable: false },
  /**
   * A step was given the spec by its digest (workflow-code version 5) and the object's spec is no
   * longer that one (changed, or the object gone or re-created): the pass is superseded by the next,
   * which observes the new spec. Not retried: the step never runs on a spec the pass did not observe.
   */
  ERR_SPEC_CHANGED: { type: 'SpecChanged', retryable: false },
  /**
   * The state a run carried across continue-as-new cannot be read by this build (a format it does not
   * know, a field of the wrong type): written by a newer or incompatible homeostat
   * (core/carried-state.ts). The compatibility check of `homeostat rollout` reports it before a promote.
   */
  ERR_CARRIED_STATE: { type: 'CarriedStateUnreadable', retryable: false },
  /**
   * A step tried to write in a dry run through a path homeostat cannot turn into a dry run: the step is
   * reported "would run; no preview" and nothing was written.
   */
  ERR_WRITES_UNAVAILABLE_IN_DRY_RUN: { type: 'WritesUnavailableInDryRun', retryable: false },
  /** A dry run of a stored object that does not exist (plan a manifest to see its creation). */
  ERR_PLAN_OBJECT_NOT_FOUND: { type: 'PlanObjectNotFound', retryable: false },
  /**
   * A manifest given to a dry run is not one the API server would accept (its CRD schema, admission) or
   * names another object than the request.
   */
  ERR_INVALID_MANIFEST: { type: 'InvalidManifest', retryable: false },
} as const satisfies Record<string, { type: string; retryable: boolean }>;

/** A stable error code of {@link errorCatalog}. */
export type ErrorCode = keyof typeof errorCatalog;

/**
 * The failure types a step's failure ends the step with for this generation (no more rounds): an
 * invalid spec, a terminal step error, an unknown kind, a request the API server rejects.
 */
export const terminalFailureTypes: readonly string[] = [
  errorCatalog.ERR_INVALID_SPEC.type,
  errorCatalog.ERR_STEP_TERMINAL.type,
  errorCatalog.ERR_UNKNOWN_KIND.type,
  errorCatalog.ERR_K8S_REJECTED.type,
];

/** The failure type of an invalid spec (`ERR_INVALID_SPEC`), also the reason of its conditions and Event. */
export const invalidSpecType = errorCatalog.ERR_INVALID_SPEC.type;

/** The failure type of a terminal step error (`ERR_STEP_TERMINAL`), also the reason of its conditions. */
export const terminalStepType = errorCatalog.ERR_STEP_TERMINAL.type;

/** The failure type of an ordinary step failure (`ERR_STEP_FAILED`), also the reason of its conditions. */
export const stepFailedType = errorCatalog.ERR_STEP_FAILED.type;

/** The failure type of a step whose object's spec changed since the pass observed it (`ERR_SPEC_CHANGED`). */
export const specChangedType = errorCatalog.ERR_SPEC_CHANGED.type;

/** The failure type of `adoptionRefused()`: refused without retries, re-checked later. */
export const adoptionRefusedType = errorCatalog.ERR_ADOPTION_REFUSED.type;

/** Options of {@link HomeostatError}. */
export interface HomeostatErrorOptions {
  readonly cause?: unknown;
  /** The server asked to wait this long (Retry-After). */
  readonly retryAfterMs?: number;
  /** The HTTP status, for Kubernetes errors. */
  readonly status?: number;
  /** Extra data carried as failure details (must be JSON). */
  readonly details?: unknown;
}

/** homeostat's error: a stable code from the catalog, a message and a cause. */
export class HomeostatError extends Error {
  override readonly name = 'HomeostatError';
  readonly code: ErrorCode;
  readonly retryAfterMs?: number;
  readonly status?: number;
  readonly details?: unknown;

  constructor(code: ErrorCode, message: string, options: HomeostatErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
    if (options.status !== undefined) this.status = options.status;
    if (options.details !== undefined) this.details = options.details;
  }
}

/** Whether a value is a {@link HomeostatError}, by its code (works across module registries). */
export function isHomeostatError(err: unknown): err is HomeostatError {
  return (
    typeof err === 'object' &&
    err !== null &&
    (err as { name?: unknown }).name === 'HomeostatError' &&
    typeof (err as { code?: unknown }).code === 'string' &&
    Object.hasOwn(errorCatalog, (err as { code: string }).code)
  );
}

/** Parses a Retry-After header (delta-seconds or an HTTP date) into milliseconds. */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

function headerOf(headers: unknown, name: string): string | undefined {
  if (typeof headers !== 'object' || headers === null) return undefined;
  for (const [key, value] of Object.entries(headers as Record<string, unknown>)) {
    if (key.toLowerCase() === name && typeof value === 'string') return value;
  }
  return undefined;
}

const networkCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * Maps an error from the Kubernetes client (an `ApiException` with an HTTP `code`, or a network
 * error) to a {@link HomeostatError}; `what` names the operation for the message.
 */
export function fromKubernetesError(err: unknown, what: string): HomeostatError {
  if (isHomeostatError(err)) return err;
  const e = (typeof err === 'object' && err !== null ? err : {}) as {
    code?: unknown;
    headers?: unknown;
    body?: unknown;
    message?: unknown;
    cause?: { code?: unknown };
  };
  const status = typeof e.code === 'number' ? e.code : undefined;
  if (status === undefined) {
    const sysCode = typeof e.code === 'string' ? e.code : typeof e.cause?.code === 'string' ? e.cause.code : '';
    const code: ErrorCode =
      networkCodes.has(sysCode) || /fetch failed/i.test(String(e.message)) ? 'ERR_NETWORK' : 'ERR_STEP_FAILED';
    return new HomeostatError(code, `${what}: ${String(e.message ?? err)}`, { cause: err });
  }
  let reason = '';
  const body = typeof e.body === 'string' ? safeJson(e.body) : e.body;
  if (typeof body === 'object' && body !== null && typeof (body as { message?: unknown }).message === 'string') {
    reason = (body as { message: string }).message;
  }
  const retryAfterMs = parseRetryAfter(headerOf(e.headers, 'retry-after'));
  const code: ErrorCode =
    status === 409
      ? 'ERR_K8S_CONFLICT'
      : status === 404
        ? 'ERR_K8S_NOT_FOUND'
        : status === 410
          ? 'ERR_K8S_GONE'
          : status === 429
            ? 'ERR_K8S_THROTTLED'
            : status === 401 || status === 403
              ? 'ERR_K8S_FORBIDDEN'
              : status >= 500
                ? 'ERR_K8S_UNAVAILABLE'
                : 'ERR_K8S_REJECTED';
  return new HomeostatError(code, `${what}: HTTP ${status}${reason ? ` ${reason}` : ''}`, {
    cause: err,
    status,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  });
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Whether an error is a Kubernetes 404 (by code). */
export function isNotFound(err: unknown): boolean {
  return (
    (isHomeostatError(err) && err.code === 'ERR_K8S_NOT_FOUND') ||
    (typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 404)
  );
}

/** Whether an error is a Kubernetes 409 (by code). */
export function isConflict(err: unknown): boolean {
  return (
    (isHomeostatError(err) && err.code === 'ERR_K8S_CONFLICT') ||
    (typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 409)
  );
}

/** Whether an error is a Kubernetes 422 Invalid (by code; a client error, before classification). */
export function isInvalid(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 422;
}

/**
 * Converts any error thrown inside an activity into the `ApplicationFailure` Temporal sees: the type
 * from the catalog, non-retryable when the catalog says so, and Retry-After as `nextRetryDelay`.
 * Failures that already are `ApplicationFailure`s pass through; unknown errors are `StepFailed`.
 * `extra` is merged into the first detail (e.g. the attempt number).
 */
export function toApplicationFailure(err: unknown, extra: Record<string, unknown> = {}): ApplicationFailure {
  if (typeof err === 'object' && err !== null && (err as { name?: unknown }).name === 'ApplicationFailure') {
    return err as ApplicationFailure;
  }
  const he = isHomeostatError(err)
    ? err
    : new HomeostatError('ERR_STEP_FAILED', err instanceof Error ? err.message : String(err), { cause: err });
  const entry = errorCatalog[he.code];
  return ApplicationFailure.create({
    message: he.message,
    type: entry.type,
    nonRetryable: !entry.retryable,
    details: [
      {
        code: he.code,
        ...(he.status !== undefined ? { status: he.status } : {}),
        // Also in the details: the SDK does not decode nextRetryDelay on the workflow side, and the
        // workflow's own retry rounds honour Retry-After too.
        ...(he.retryAfterMs !== undefined ? { retryAfterMs: he.retryAfterMs } : {}),
        data: he.details ?? null,
        ...extra,
      },
    ],
    ...(he.retryAfterMs !== undefined ? { nextRetryDelay: he.retryAfterMs } : {}),
    ...(he.cause instanceof Error ? { cause: he.cause } : {}),
  });
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * Marks a failure that retrying cannot fix: the step fails for this generation, the object reports
 * `Degraded` with reason `TerminalStepError`, and nothing is retried until the spec, an owned child
 * or a referenced object changes (controller-runtime's `reconcile.TerminalError`).
 *
 * @example `throw terminal(new Error('zone example.com is not delegated to us'))`
 */
export function terminal(err: unknown): HomeostatError {
  return new HomeostatError('ERR_STEP_TERMINAL', messageOf(err), { cause: err });
}

/**
 * Asks for the next attempt after `delay` instead of the step's backoff (a rate-limited API that said
 * when to come back). `delay` is a duration: `'30s'`, `'2 minutes'` or milliseconds.
 *
 * @example `throw retryAfter('30s', new Error('quota exhausted'))`
 */
export function retryAfter(delay: number | string, err: unknown): HomeostatError {
  const ms = durationMs(delay, 0);
  return new HomeostatError('ERR_STEP_FAILED', messageOf(err), { cause: err, retryAfterMs: ms });
}

/** The details an {@link adoptionRefused} failure carries. */
export interface AdoptionRefusedDetails {
  /** The conflicting thing, e.g. `Service tenant-a/web` or `PostgreSQL role postgres`. */
  readonly conflict: string;
}

/**
 * Refuses to take over `conflict`, something that already exists and that homeostat did not create
 * for this object (controller-runtime's refusal to adopt an object another controller owns). The object
 * reports `Ready=False` with reason `AdoptionRefused` and the message; nothing is changed, nothing is
 * retried with backoff, and the step is tried again at the plan's drift interval (or every 5 minutes),
 * so the condition clears once the conflict is gone.
 *
 * @example `throw adoptionRefused('Service team-a/web', 'it exists and is not owned by this App')`
 */
export function adoptionRefused(conflict: string, message: string): HomeostatError {
  const details: AdoptionRefusedDetails = { conflict };
  return new HomeostatError('ERR_ADOPTION_REFUSED', `${conflict}: ${message}`, { details });
}

/**
 * The error a write path throws in a dry run when it cannot be turned into a dry run (a step's own
 * client to an external system, checking `ctx.dryRun`): the dry run reports the step "would run; no
 * preview" and nothing is written. `what` names the write (`CREATE ROLE app`).
 *
 * @example `if (ctx.dryRun) throw writesUnavailableInDryRun('POST /records')`
 */
export function writesUnavailableInDryRun(what: string): HomeostatError {
  return new HomeostatError('ERR_WRITES_UNAVAILABLE_IN_DRY_RUN', `${what}: writes are unavailable in a dry run`);
}
