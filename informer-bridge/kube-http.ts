/**
 * Plain JSON requests to the API server with the kubeconfig's TLS and credentials, a hard timeout
 * and an abort signal. The generated clients hide status codes behind exceptions and have no
 * per-request timeout; the reflector (410 on list pages) and the Lease (renew deadline) need both.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import type * as k8s from '@kubernetes/client-node';

/** A response: the HTTP status and the parsed JSON body (undefined when not JSON). */
export interface KubeResponse<T = unknown> {
  readonly status: number;
  readonly body: T | undefined;
}

/** An error with the HTTP status (when the server answered) or a transport error. */
export class KubeRequestError extends Error {
  readonly code = 'ERR_KUBE_REQUEST';
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
  /** Abort the request after this long. @default 30_000 */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** Sends one request to the current cluster of `kc` and returns its status and JSON body. */
export async function kubeRequest<T = unknown>(
  kc: k8s.KubeConfig,
  path: string,
  options: KubeRequestOptions = {},
): Promise<KubeResponse<T>> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new KubeRequestError('no current cluster in the kubeconfig', undefined);
  const url = new URL(cluster.server + path);
  for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
  const opts: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(opts);
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: http.OutgoingHttpHeaders = {
    ...(opts.headers as http.OutgoingHttpHeaders | undefined),
    Accept: 'application/json',
  };
  if (payload !== undefined) {
    headers['Content-Type'] = options.contentType ?? 'application/json';
    headers['Content-Length'] = Buffer.byteLength(payload);
  }
  const mod = url.protocol === 'http:' ? http : https;
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

/** The URL path of a resource collection, optionally in one namespace. */
export function collectionPath(
  r: { group: string; version: string; plural: string; namespaced: boolean },
  namespace?: string,
): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  return r.namespaced && namespace ? `${base}/namespaces/${namespace}/${r.plural}` : `${base}/${r.plural}`;
}
