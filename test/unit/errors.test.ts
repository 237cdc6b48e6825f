import { ApiException } from '@kubernetes/client-node';
import {
  errorCatalog,
  fromKubernetesError,
  HomeostatError,
  isHomeostatError,
  parseRetryAfter,
  toApplicationFailure,
} from '../../core/errors';

const apiError = (code: number, headers: Record<string, string> = {}, message = 'nope') =>
  new ApiException(code, `HTTP ${code}`, JSON.stringify({ kind: 'Status', message }), headers);

describe('error catalog', () => {
  it('given HTTP errors from the Kubernetes client, it maps them to stable codes', () => {
    expect(fromKubernetesError(apiError(409), 'patch').code).toBe('ERR_K8S_CONFLICT');
    expect(fromKubernetesError(apiError(404), 'get').code).toBe('ERR_K8S_NOT_FOUND');
    expect(fromKubernetesError(apiError(429), 'get').code).toBe('ERR_K8S_THROTTLED');
    expect(fromKubernetesError(apiError(503), 'get').code).toBe('ERR_K8S_UNAVAILABLE');
    expect(fromKubernetesError(apiError(403), 'get').code).toBe('ERR_K8S_FORBIDDEN');
    expect(fromKubernetesError(apiError(422, {}, 'spec.x: Invalid value'), 'apply')).toMatchObject({
      code: 'ERR_K8S_REJECTED',
      message: 'apply: HTTP 422 spec.x: Invalid value',
      status: 422,
    });
    const net = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' });
    expect(fromKubernetesError(net, 'get').code).toBe('ERR_NETWORK');
  });

  it('given 429/503 with Retry-After, the failure carries nextRetryDelay and stays retryable', () => {
    const failure = toApplicationFailure(fromKubernetesError(apiError(429, { 'Retry-After': '7' }), 'get'));
    expect(failure).toMatchObject({ type: 'KubernetesThrottled', nonRetryable: false, nextRetryDelay: 7000 });
    expect(failure.details?.[0]).toMatchObject({ code: 'ERR_K8S_THROTTLED', status: 429, retryAfterMs: 7000 });
    const unavailable = toApplicationFailure(fromKubernetesError(apiError(503, { 'retry-after': '2' }), 'get'));
    expect(unavailable).toMatchObject({ type: 'KubernetesUnavailable', nextRetryDelay: 2000 });
    expect(parseRetryAfter('Wed, 02 Dec 2026 10:00:10 GMT', Date.parse('Wed, 02 Dec 2026 10:00:00 GMT'))).toBe(10_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
  });

  it('given terminal codes, the failure is non-retryable with the catalog type; InvalidSpec is InvalidSpec', () => {
    expect(toApplicationFailure(new HomeostatError('ERR_INVALID_SPEC', 'bad'))).toMatchObject({
      type: 'InvalidSpec',
      nonRetryable: true,
    });
    expect(toApplicationFailure(new HomeostatError('ERR_STEP_TERMINAL', 'no'))).toMatchObject({
      type: 'TerminalStepError',
      nonRetryable: true,
    });
    expect(toApplicationFailure(fromKubernetesError(apiError(400), 'apply')).nonRetryable).toBe(true);
    expect(toApplicationFailure(new Error('boom'))).toMatchObject({ type: 'StepFailed', nonRetryable: false });
  });

  it('given an error from another module registry, classification goes by code, not instanceof', () => {
    const foreign = { name: 'HomeostatError', code: 'ERR_K8S_CONFLICT', message: 'x' };
    expect(isHomeostatError(foreign)).toBe(true);
    expect(isHomeostatError({ name: 'HomeostatError', code: 'ERR_MADE_UP' })).toBe(false);
    expect(Object.values(errorCatalog).every((e) => typeof e.retryable === 'boolean')).toBe(true);
  });

  it('given extra fields, they are merged into the failure details with the code', () => {
    const f = toApplicationFailure(new Error('boom'), { attempt: 3 });
    expect(f.details).toEqual([{ code: 'ERR_STEP_FAILED', data: null, attempt: 3 }]);
  });
});
