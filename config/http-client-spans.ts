/**
 * A client span for each outgoing HTTP request made under a span: the Kubernetes API calls of the
 * activities (and the API's TokenReviews and SubjectAccessReviews), any HTTP call a step makes through
 * Node's `http`/`https`. Read from Node's `http.client.*` diagnostics channels, so it needs no
 * require hook and sees modules loaded before tracing started. Requests made outside any span (the
 * bridge's watches) are not recorded; the request carries the span as its `traceparent`. URLs are
 * recorded without their query string.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { ClientRequest, IncomingMessage } from 'node:http';
import { context, propagation, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { isTracingSuppressed } from '@opentelemetry/core';
import { tracerName } from '../core/in-span';

const spans = new WeakMap<ClientRequest, Span>();

function onStart(message: unknown): void {
  const { request } = message as { request: ClientRequest };
  const active = context.active();
  if (trace.getSpan(active) === undefined || isTracingSuppressed(active)) return;
  const path = request.path.split('?')[0] ?? '/';
  const host = String(request.getHeader('host') ?? request.host);
  const span = trace.getTracer(tracerName).startSpan(
    `${request.method} ${path}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'http.request.method': request.method,
        'server.address': request.host,
        // Without the query string: a step's call may carry a token or signature there.
        'url.full': `${request.protocol}//${host}${path}`,
        'url.path': path,
      },
    },
    active,
  );
  spans.set(request, span);
  try {
    propagation.inject(trace.setSpan(active, span), request, {
      set: (r: ClientRequest, key: string, value: string) => r.setHeader(key, value),
    });
  } catch {
    // headers already sent: the span is still recorded
  }
}

function onFinish(message: unknown): void {
  const { request, response } = message as { request: ClientRequest; response: IncomingMessage };
  const span = spans.get(request);
  if (!span) return;
  spans.delete(request);
  const status = response.statusCode ?? 0;
  span.setAttribute('http.response.status_code', status);
  if (status >= 400) span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${status}` });
  span.end();
}

function onError(message: unknown): void {
  const { request, error } = message as { request: ClientRequest; error: Error };
  const span = spans.get(request);
  if (!span) return;
  spans.delete(request);
  span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
  span.end();
}

/** Starts recording outgoing HTTP requests made under a span; returns the function that stops it. */
export function recordHttpClientSpans(): () => void {
  subscribe('http.client.request.start', onStart);
  subscribe('http.client.response.finish', onFinish);
  subscribe('http.client.request.error', onError);
  return () => {
    unsubscribe('http.client.request.start', onStart);
    unsubscribe('http.client.response.finish', onFinish);
    unsubscribe('http.client.request.error', onError);
  };
}
