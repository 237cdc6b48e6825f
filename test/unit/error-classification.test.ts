/**
 * Error classification to the letter: every catalog code's Temporal type and retry class, the HTTP
 * status and network-error mapping at the edges of each range, Retry-After in both forms, and what a
 * failure carries (or leaves out). Written for mutants of core/errors.ts that survived (issue 17).
 */
import { ApplicationFailure } from '@temporalio/common';
import {
  type ErrorCode,
  fromKubernetesError,
  HomeostatError,
  isConflict,
  isHomeostatError,
  isNotFound,
  parseRetryAfter,
  adoptionRefused,
  retryAfter,
  terminal,
  toApplicationFailure,
} from '../../core/errors';

const http = (code: number, body?: unknown, headers?: unknown) => ({ code, body, headers, message: `HTTP ${code}` });

describe('error classification', () => {
  it('given each catalog code, the failure has its Temporal type and retry class', () => {
    const table: Record<ErrorCode, [string, boolean]> = {
      ERR_INVALID_SPEC: ['InvalidSpec', false],
      ERR_STEP_TERMINAL: ['TerminalStepError', false],
      ERR_STEP_FAILED: ['StepFailed', true],
      ERR_UNKNOWN_KIND: ['UnknownKind', false],
      ERR_K8S_CONFLICT: ['KubernetesConflict', true],
      ERR_K8S_NOT_FOUND: ['KubernetesNotFound', true],
      ERR_K8S_GONE: ['KubernetesGone', true],
      ERR_K8S_THROTTLED: ['KubernetesThrottled', true],
      ERR_K8S_UNAVAILABLE: ['KubernetesUnavailable', true],
      ERR_K8S_FORBIDDEN: ['KubernetesForbidden', true],
      ERR_K8S_REJECTED: ['KubernetesRejected', false],
      ERR_NETWORK: ['NetworkError', true],
      ERR_ADOPTION_REFUSED: ['AdoptionRefused', false],
      ERR_PAYLOAD_CODEC: ['PayloadCodecError', false],
      ERR_WATCHDOG: ['WatchInactive', true],
      ERR_KUBE_REQUEST: ['KubernetesRequestFailed', true],
      ERR_DISCOVERY: ['DiscoveryFailed', false],
      ERR_SPEC_CHANGED: ['SpecChanged', false],
      ERR_CARRIED_STATE: ['CarriedStateUnreadable', false],
      ERR_WRITES_UNAVAILABLE_IN_DRY_RUN: ['WritesUnavailableInDryRun', false],
      ERR_PLAN_OBJECT_NOT_FOUND: ['PlanObjectNotFound', false],
      ERR_INVALID_MANIFEST: ['InvalidManifest', false],
    };
    for (const [code, [type, retryable]] of Object.entries(table)) {
      const f = toApplicationFailure(new HomeostatError(code as ErrorCode, 'm'));
      expect({ code, type: f.type, nonRetryable: f.nonRetryable }).toEqual({ code, type, nonRetryable: !retryable });
    }
  });

  it('given HTTP statuses, each maps to its code, at the edges of each range, with the status and reason in the message', () => {
    const codes = [400, 401, 403, 404, 405, 409, 410, 422, 429, 499, 500, 503, 504].map(
      (s) => [s, fromKubernetesError(http(s), 'get').code] as const,
    );
    expect(codes).toEqual([
      [400, 'ERR_K8S_REJECTED'],
      [401, 'ERR_K8S_FORBIDDEN'],
      [403, 'ERR_K8S_FORBIDDEN'],
      [404, 'ERR_K8S_NOT_FOUND'],
      [405, 'ERR_K8S_REJECTED'],
      [409, 'ERR_K8S_CONFLICT'],
      [410, 'ERR_K8S_GONE'],
      [422, 'ERR_K8S_REJECTED'],
      [429, 'ERR_K8S_THROTTLED'],
      [499, 'ERR_K8S_REJECTED'],
      [500, 'ERR_K8S_UNAVAILABLE'],
      [503, 'ERR_K8S_UNAVAILABLE'],
      [504, 'ERR_K8S_UNAVAILABLE'],
    ]);
    const err = http(409, JSON.stringify({ message: 'the object has been modified' }));
    const mapped = fromKubernetesError(err, 'patch status');
    expect(mapped).toMatchObject({ message: 'patch status: HTTP 409 the object has been modified', status: 409 });
    expect(mapped.cause).toBe(err);
    expect(mapped.retryAfterMs).toBeUndefined();
    // A body already parsed, a body that is not JSON, a message that is not a string: no reason.
    expect(fromKubernetesError(http(500, { message: 'etcd down' }), 'get').message).toBe('get: HTTP 500 etcd down');
    expect(fromKubernetesError(http(500, '<html>'), 'get').message).toBe('get: HTTP 500');
    expect(fromKubernetesError(http(500, { message: 7 }), 'get').message).toBe('get: HTTP 500');
    expect(fromKubernetesError(http(500, null), 'get').message).toBe('get: HTTP 500');
  });

  it('given Retry-After in any header case, the delay is carried; other headers and values are ignored', () => {
    expect(fromKubernetesError(http(429, undefined, { 'RETRY-AFTER': '3' }), 'get').retryAfterMs).toBe(3000);
    expect(fromKubernetesError(http(429, undefined, { 'x-retry-after': '3' }), 'get').retryAfterMs).toBeUndefined();
    expect(fromKubernetesError(http(429, undefined, { 'retry-after': 3 }), 'get').retryAfterMs).toBeUndefined();
    expect(fromKubernetesError(http(429, undefined, 'retry-after: 3'), 'get').retryAfterMs).toBeUndefined();
    expect(fromKubernetesError(http(429, undefined, null), 'get').retryAfterMs).toBeUndefined();
  });

  it('given errors without an HTTP status, network failures are ERR_NETWORK and the rest ERR_STEP_FAILED', () => {
    const sys = (code: string) => Object.assign(new Error(`${code} somewhere`), { code });
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN']) {
      expect(fromKubernetesError(sys(code), 'get').code).toBe('ERR_NETWORK');
    }
    expect(fromKubernetesError(sys('EACCES'), 'get').code).toBe('ERR_STEP_FAILED');
    // undici: `TypeError: fetch failed` with the system error as its cause.
    const fetchFailed = Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } });
    expect(fromKubernetesError(fetchFailed, 'get')).toMatchObject({
      code: 'ERR_NETWORK',
      message: 'get: fetch failed',
    });
    expect(fromKubernetesError(new Error('Fetch Failed'), 'get').code).toBe('ERR_NETWORK');
    expect(fromKubernetesError(Object.assign(new Error('x'), { cause: { code: 'EPIPE' } }), 'get').code).toBe(
      'ERR_NETWORK',
    );
    expect(fromKubernetesError(Object.assign(new Error('x'), { cause: { code: 5 } }), 'get').code).toBe(
      'ERR_STEP_FAILED',
    );
    const thrown = fromKubernetesError('a string was thrown', 'list');
    expect(thrown).toMatchObject({ code: 'ERR_STEP_FAILED', message: 'list: a string was thrown' });
    expect(thrown.cause).toBe('a string was thrown');
    expect(fromKubernetesError(null, 'list').message).toBe('list: null');
  });

  it('given a HomeostatError, fromKubernetesError returns it unchanged', () => {
    const he = new HomeostatError('ERR_K8S_GONE', 'gone', { status: 410 });
    expect(fromKubernetesError(he, 'watch')).toBe(he);
  });

  it('given Retry-After values, seconds and HTTP dates convert and everything else is undefined', () => {
    const now = Date.parse('Wed, 02 Dec 2026 10:00:00 GMT');
    expect(parseRetryAfter(' 7 ', now)).toBe(7000);
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('Wed, 02 Dec 2026 09:59:00 GMT', now)).toBe(0); // a date in the past: now
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter('   ', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });

  it('given a HomeostatError, only the options given become properties', () => {
    const bare = new HomeostatError('ERR_STEP_FAILED', 'm');
    expect([bare.cause, bare.retryAfterMs, bare.status, bare.details]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(bare).toMatchObject({ name: 'HomeostatError', code: 'ERR_STEP_FAILED', message: 'm' });
    const full = new HomeostatError('ERR_STEP_FAILED', 'm', { cause: 0, retryAfterMs: 0, status: 0, details: 0 });
    expect([full.cause, full.retryAfterMs, full.status, full.details]).toEqual([0, 0, 0, 0]);
  });

  it('given look-alikes, isHomeostatError needs the name, a string code and a catalog code', () => {
    expect(isHomeostatError(new HomeostatError('ERR_NETWORK', 'm'))).toBe(true);
    expect(isHomeostatError(null)).toBe(false);
    expect(isHomeostatError('HomeostatError')).toBe(false);
    expect(isHomeostatError({ name: 'Error', code: 'ERR_NETWORK' })).toBe(false);
    expect(isHomeostatError({ name: 'HomeostatError', code: 404 })).toBe(false);
    // A code inherited from Object.prototype is not in the catalog (`in` once said it was).
    expect(isHomeostatError({ name: 'HomeostatError', code: 'toString' })).toBe(false);
  });

  it('given errors, isNotFound and isConflict read the code of a HomeostatError or of a raw client error', () => {
    expect(isNotFound(new HomeostatError('ERR_K8S_NOT_FOUND', 'm'))).toBe(true);
    expect(isNotFound({ code: 404 })).toBe(true);
    expect(isNotFound(new HomeostatError('ERR_K8S_CONFLICT', 'm'))).toBe(false);
    expect(isNotFound({ code: 409 })).toBe(false);
    expect(isNotFound(null)).toBe(false);
    expect(isNotFound(404)).toBe(false);
    expect(isConflict(new HomeostatError('ERR_K8S_CONFLICT', 'm'))).toBe(true);
    expect(isConflict({ code: 409 })).toBe(true);
    expect(isConflict(new HomeostatError('ERR_K8S_NOT_FOUND', 'm'))).toBe(false);
    expect(isConflict({ code: 404 })).toBe(false);
    expect(isConflict(null)).toBe(false);
    expect(isConflict(409)).toBe(false);
  });

  it('given failures, toApplicationFailure passes ApplicationFailures through and carries only what is known', () => {
    const af = ApplicationFailure.nonRetryable('already', 'Custom');
    expect(toApplicationFailure(af)).toBe(af);

    const plain = toApplicationFailure('thrown text');
    expect(plain).toMatchObject({ message: 'thrown text', type: 'StepFailed', nonRetryable: false });
    expect(plain.details).toEqual([{ code: 'ERR_STEP_FAILED', data: null }]);
    expect(plain.cause).toBeUndefined();
    expect(plain.nextRetryDelay).toBeUndefined();

    const cause = new Error('socket hang up');
    const rich = toApplicationFailure(
      new HomeostatError('ERR_K8S_UNAVAILABLE', 'get: HTTP 503', { cause, status: 503, retryAfterMs: 0, details: [1] }),
      { attempt: 2 },
    );
    expect(rich.details).toEqual([
      { code: 'ERR_K8S_UNAVAILABLE', status: 503, retryAfterMs: 0, data: [1], attempt: 2 },
    ]);
    expect(rich.nextRetryDelay).toBe(0);
    expect(rich.cause?.message).toBe('socket hang up');
  });

  it('given the helpers, terminal() and retryAfter() keep the message and the cause', () => {
    const cause = new Error('zone is not ours');
    expect(terminal(cause)).toMatchObject({ code: 'ERR_STEP_TERMINAL', message: 'zone is not ours', cause });
    expect(terminal('plain')).toMatchObject({ code: 'ERR_STEP_TERMINAL', message: 'plain', cause: 'plain' });
    expect(retryAfter('30s', cause)).toMatchObject({
      code: 'ERR_STEP_FAILED',
      message: 'zone is not ours',
      retryAfterMs: 30_000,
    });
    expect(retryAfter(1500, 'quota')).toMatchObject({ message: 'quota', retryAfterMs: 1500, cause: 'quota' });
  });

  it('given adoptionRefused, the failure is AdoptionRefused, not retried, and names the conflict in message and details', () => {
    const f = toApplicationFailure(adoptionRefused('Service team-a/web', 'not created by this App'));
    expect(f.type).toBe('AdoptionRefused');
    expect(f.nonRetryable).toBe(true);
    expect(f.message).toBe('Service team-a/web: not created by this App');
    expect(f.details?.[0]).toMatchObject({ code: 'ERR_ADOPTION_REFUSED', data: { conflict: 'Service team-a/web' } });
  });
});
