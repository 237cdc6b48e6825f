/**
 * A client span for each SQL statement sent through `pg` under a span (the built-in PostgresDatabase
 * steps' statements). Only the statement's operation (`SELECT`, `CREATE ROLE`, `ALTER DATABASE`…), the
 * database and the server are recorded — never the statement's text, and a failure only by its
 * SQLSTATE: homeostat's statements carry password verifiers and literals that a trace backend's readers
 * must not see. The `pg` patched is the one this package resolves (an operator bundling its own copy is
 * not traced).
 */
import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { isTracingSuppressed } from '@opentelemetry/core';
import { tracerName } from '../core/in-span';

const operationPattern =
  /^\s*(?:(CREATE|ALTER|DROP|GRANT|REVOKE|COMMENT ON|SET|RESET|SHOW|TRUNCATE|REASSIGN OWNED)\b\s*(ROLE|USER|DATABASE|SCHEMA|TABLE|INDEX|EXTENSION|EXTENSIONS|ALL|CONNECTION|FUNCTION|VIEW|SEQUENCE)?|([A-Za-z]+))/i;

/** The operation of a statement (its leading keywords, upper case), `…` appended when more statements follow. */
export function sqlOperation(text: string): string {
  const m = operationPattern.exec(text);
  const op = m ? [m[1] ?? m[3], m[2]].filter(Boolean).join(' ').toUpperCase() : 'SQL';
  return /;\s*\S/.test(text) ? `${op} …` : op;
}

type Query = (...args: unknown[]) => unknown;
interface Connection {
  readonly host?: string;
  readonly port?: number;
  readonly database?: string;
}

function finish(span: Span, err?: unknown): void {
  if (err !== undefined && err !== null) {
    const code = (err as { code?: unknown }).code;
    span.setStatus({ code: SpanStatusCode.ERROR, message: typeof code === 'string' ? `SQLSTATE ${code}` : 'failed' });
  }
  span.end();
}

/** Starts recording `pg` statements made under a span; returns the function that stops it. */
export function recordPgSpans(): () => void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const proto = (require('pg') as { Client: { prototype: { query: Query } } }).Client.prototype;
  const original = proto.query;
  proto.query = function query(this: Connection, ...args: unknown[]): unknown {
    const active = context.active();
    if (trace.getSpan(active) === undefined || isTracingSuppressed(active)) return original.apply(this, args);
    const first = args[0] as { text?: unknown } | string | undefined;
    const text = typeof first === 'string' ? first : typeof first?.text === 'string' ? first.text : '';
    const operation = sqlOperation(text);
    const span = trace.getTracer(tracerName).startSpan(
      operation,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'db.system.name': 'postgresql',
          'db.operation.name': operation,
          ...(this.database ? { 'db.namespace': this.database } : {}),
          ...(this.host ? { 'server.address': this.host } : {}),
          ...(this.port ? { 'server.port': this.port } : {}),
        },
      },
      active,
    );
    const last = args[args.length - 1];
    if (typeof last === 'function') {
      args[args.length - 1] = (err: unknown, ...rest: unknown[]) => {
        finish(span, err);
        return (last as (...a: unknown[]) => unknown)(err, ...rest);
      };
      return original.apply(this, args);
    }
    const result = original.apply(this, args) as
      | {
          then?: (ok: () => void, ko: (e: unknown) => void) => unknown;
          on?: (e: string, f: (x?: unknown) => void) => void;
        }
      | undefined;
    if (typeof result?.then === 'function') {
      result.then(
        () => finish(span),
        (err: unknown) => finish(span, err),
      );
    } else if (typeof result?.on === 'function') {
      result.on('end', () => finish(span));
      result.on('error', (err) => finish(span, err));
    } else {
      span.end();
    }
    return result;
  };
  return () => {
    proto.query = original;
  };
}
