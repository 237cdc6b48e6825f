/**
 * Every error the API meets, answered as a problem document (`application/problem+json`): its own
 * {@link ApiProblem}s, request validation, Fastify's and its plugins' client errors, Temporal's
 * deadline and unavailability, and anything else as a logged 502; unknown routes as 404 (a served path
 * asked with another method is a 405 before it gets here: authenticate-first.ts).
 */
import type { FastifyError } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { ApiProblem, problem, type ProblemCode } from './problems';
import { grpcDeadlineExceeded, grpcFailedPrecondition, grpcUnavailable, temporalStatus } from './temporal-calls';
import type { ApiApp } from './route-context';

const fastifyCodes: Record<number, ProblemCode> = {
  400: 'ERR_VALIDATION',
  404: 'ERR_NOT_FOUND',
  413: 'ERR_PAYLOAD_TOO_LARGE',
  415: 'ERR_UNSUPPORTED_MEDIA_TYPE',
  429: 'ERR_RATE_LIMITED',
};

/** Whether `err` (or a cause of it) is Temporal's "no poller seen for task queue recently". */
function noPoller(err: unknown): boolean {
  for (let e = err, i = 0; typeof e === 'object' && e !== null && i < 4; e = (e as { cause?: unknown }).cause, i++) {
    const message = (e as { message?: unknown }).message;
    if (typeof message === 'string' && /no poller/i.test(message)) return true;
  }
  return false;
}

/** Sets `app`'s error and not-found handlers to answer with problem documents. */
export function answerWithProblems(app: ApiApp): void {
  app.setErrorHandler((err: FastifyError | ApiProblem, req, reply) => {
    let doc;
    if (err instanceof ApiProblem) {
      doc = problem(err.code, err.message, req.url);
      if (err.retryAfterSeconds !== undefined) void reply.header('retry-after', String(err.retryAfterSeconds));
      if (err.allow !== undefined) void reply.header('allow', err.allow.join(', '));
    } else if (hasZodFastifySchemaValidationErrors(err)) {
      const detail = err.validation.map((v) => `${v.instancePath || 'request'}: ${v.message ?? 'invalid'}`).join('; ');
      doc = problem('ERR_VALIDATION', `invalid ${err.validationContext ?? 'request'}: ${detail}`, req.url);
    } else if (typeof err.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 500) {
      // Fastify's and its plugins' client errors, as the documented code of their status (a status the
      // API does not document is answered as a 400 rather than with an undocumented status; undeclared
      // methods never get here: see allowed-methods.ts).
      const detail = typeof err.message === 'string' && err.message !== '' ? err.message : 'the request was refused';
      doc = problem(fastifyCodes[err.statusCode] ?? 'ERR_VALIDATION', detail, req.url);
    } else if (temporalStatus(err) === grpcDeadlineExceeded) {
      doc = problem('ERR_TIMEOUT', 'Temporal did not answer in time', req.url);
    } else if (temporalStatus(err) === grpcUnavailable) {
      doc = problem('ERR_UNAVAILABLE', 'Temporal is unreachable', req.url);
    } else if (temporalStatus(err) === grpcFailedPrecondition && noPoller(err)) {
      // A state query with no worker polling the object's task queue (workers down or scaled to zero).
      doc = problem(
        'ERR_UNAVAILABLE',
        'no worker is polling the object’s task queue: its state cannot be read now',
        req.url,
      );
    } else {
      req.log.error({ err }, 'request failed');
      doc = problem('ERR_UPSTREAM', 'the request failed; see the server log', req.url);
    }
    // RFC 9110: a 401 names the scheme it wants.
    if (doc.status === 401) void reply.header('www-authenticate', 'Bearer');
    return reply.status(doc.status).type('application/problem+json').send(doc);
  });
  app.setNotFoundHandler((req, reply) =>
    reply
      .status(404)
      .type('application/problem+json')
      .send(problem('ERR_NOT_FOUND', `no route ${req.method} ${req.url.split('?')[0] ?? ''}`, req.url)),
  );
}
