/**
 * A server span per API request (issue 30): the root of the trace of a pass the request triggers
 * (`reconcile-now` carries the span's context in its Temporal header), or a child of the caller's
 * span when the request carries a W3C `traceparent`. Named by method and route, never by the object's
 * path. With tracing off the tracer is a no-op.
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { FastifyRequest } from 'fastify';
import { tracerName } from '../core/in-span';
import type { ApiApp } from './route-context';

const spans = new WeakMap<FastifyRequest, Span>();

/** Adds the request-span hooks to `app` (before any route). */
export function traceRequests(app: ApiApp): void {
  app.addHook('onRequest', (req, _reply, done) => {
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const route = req.routeOptions.url ?? 'unmatched';
    const span = trace.getTracer(tracerName).startSpan(
      `${req.method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': req.method, 'http.route': route, 'url.path': req.url.split('?')[0] ?? '' },
      },
      parent,
    );
    spans.set(req, span);
    context.with(trace.setSpan(parent, span), done);
  });
  app.addHook('onResponse', (req, reply, done) => {
    const span = spans.get(req);
    if (span) {
      spans.delete(req);
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${reply.statusCode}` });
      span.end();
    }
    done();
  });
}
