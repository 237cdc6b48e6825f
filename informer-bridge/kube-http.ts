/**
 * Plain JSON requests to the API server with the kubeconfig's TLS and credentials, a hard timeout
 * and an abort signal. The generated clients hide status codes behind exceptions and have no
 * per-request timeout; the reflector (410 on list pages) and the Lease (renew deadline) need both.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import type * as k8s from '@kubernetes/client-node';
import type { ErrorCode } from '../core/errors';

/** A response: the HTTP status and the parsed JSON body (undefined when not JSON). */
export interface KubeResponse<T = unknown> {
  readonly status: number;
  readonly body: T | undefined;
}

/** An error with the HTTP status (when the server answered) or a transport error. */
export class KubeRequestError extends Error {
  readonly code: ErrorCode = 'ERR_KUBE_REQUEST';
  constructor(
    message: string,
    readonly status: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Options of {@link kubeRequest}. */
export interface KubeRequestOptions {
  readonly method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly query?: Record<string, string | number | boolean | undefined>;
  readonly body?: unknown;
  /** @default 'application/json' */
  readonly contentType?: string;
  /** @default 'application/json' */
  readonly accept?: string;
  /** Abort the request after this long. @default 30_000 */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** The URL, TLS/credential options and headers of a request to the current cluster of `kc`. */
async function prepare(
  kc: k8s.KubeConfig,
  path: string,
  query: KubeRequestOptions['query'],
  accept: string | undefined,
): Promise<{ url: URL; opts: https.RequestOptions; headers: http.OutgoingHttpHeaders; mod: typeof https }> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new KubeRequestError('no current cluster in the kubeconfig', undefined);
  const url = new URL(cluster.server + path);
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const headers: http.OutgoingHttpHeaders = {
    ...(opts.headers as http.OutgoingHttpHeaders | undefined),
    Accept: accept ?? 'application/json',
  };
  return { url, opts, headers, mod: url.protocol === 'http:' ? (http as unknown as typeof https) : https };
}

/** Sends one request to the current cluster of `kc` and returns its status and JSON body. */
export async function kubeRequest<T = unknown>(
  kc: k8s.KubeConfig,
  path: string,
  options: KubeRequestOptions = {},
): Promise<KubeResponse<T>> {
  const { url, opts, headers, mod } = await prepare(kc, path, options.query, options.accept);
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  if (payload !== undefined) {
    headers['Content-Type'] = options.contentType ?? 'application/json';
    headers['Content-Length'] = Buffer.byteLength(payload);
  }
  return new Promise((resolve, reject) => {
    const req = mod.request(
      url,
      {
        ...opts,
        method: options.method ?? 'GET',
        headers,
        signal: options.signal,
        timeout: options.timeoutMs ?? 30_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => reject(new KubeRequestError(`${path}: ${err.message}`, undefined, { cause: err })));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: T | undefined;
          try {
            body = text ? (JSON.parse(text) as T) : undefined;
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, body });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timed out after ${options.timeoutMs ?? 30_000} ms`)));
    req.on('error', (err) => reject(new KubeRequestError(`${path}: ${err.message}`, undefined, { cause: err })));
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

/** Options of {@link kubeWatch}. */
export interface KubeWatchOptions {
  /** Query parameters besides `watch=true` (resourceVersion, timeoutSeconds, labelSelector, …). */
  readonly query?: KubeRequestOptions['query'];
  /** @default 'application/json' */
  readonly accept?: string;
  /** Aborting it closes the watch (the promise then rejects; callers that aborted ignore it). */
  readonly signal?: AbortSignal;
  /** Called for every event line, in order (`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, `ERROR`). */
  onEvent(type: string, object: unknown): void;
}

/**
 * Streams one watch request: resolves when the server ends the watch, rejects with a
 * {@link KubeRequestError} carrying the HTTP status when it refuses it (410 when the resourceVersion
 * is too old) or when the connection fails. Unlike the client library's `Watch`, the Accept header
 * is the caller's (metadata-only watches need `as=PartialObjectMetadata`).
 */
export async function kubeWatch(kc: k8s.KubeConfig, path: string, options: KubeWatchOptions): Promise<void> {
  const { url, opts, headers, mod } = await prepare(kc, path, { ...options.query, watch: true }, options.accept);
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (err?: Error): void => {
      if (settled) return;
      settled = true;
      if (err) reject(err);
      else resolve();
    };
    const req = mod.request(url, { ...opts, method: 'GET', headers, signal: options.signal }, (res) => {
      const status = res.statusCode ?? 0;
      if (status !== 200) {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', () => {});
        res.on('end', () => {
          let message = '';
          try {
            message = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { message?: string }).message ?? '';
          } catch {
            // not a Status: the HTTP status says enough
          }
          settle(new KubeRequestError(`watch ${path}: HTTP ${status} ${message}`.trim(), status));
        });
        return;
      }
      res.setEncoding('utf8');
      let buffered = '';
      res.on('data', (chunk: string) => {
        buffered += chunk;
        for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
          const line = buffered.slice(0, nl).trim();
          buffered = buffered.slice(nl + 1);
          if (!line || settled) continue;
          let event: { type?: unknown; object?: unknown };
          try {
            event = JSON.parse(line) as { type?: unknown; object?: unknown };
          } catch {
            continue; // a torn line from a dying connection: the watch restarts from the last resourceVersion
          }
          if (typeof event.type === 'string') options.onEvent(event.type, event.object);
        }
      });
      res.on('end', () => settle());
      res.on('error', (err) =>
        settle(new KubeRequestError(`watch ${path}: ${err.message}`, undefined, { cause: err })),
      );
      res.on('close', () => settle(new KubeRequestError(`watch ${path}: connection closed`, undefined)));
    });
    // A dead peer is noticed by TCP keep-alive too, not only by the reflector's inactivity watchdog.
    req.on('socket', (socket) => socket.setKeepAlive(true, 30_000));
    req.on('error', (err) => settle(new KubeRequestError(`watch ${path}: ${err.message}`, undefined, { cause: err })));
    req.end();
  });
}

/** The URL path of a resource collection, optionally in one namespace. */
export function collectionPath(
  r: { group: string; version: string; plural: string; namespaced: boolean },
  namespace?: string,
): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  return r.namespaced && namespace ? `${base}/namespaces/${namespace}/${r.plural}` : `${base}/${r.plural}`;
}
