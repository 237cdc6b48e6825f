/**
 * A small HTTP proxy in front of kube-apiserver, for fault tests: homeostat's processes talk plain
 * HTTP to it (a kubeconfig without credentials), it forwards every request over TLS with the admin
 * client certificate, streams answers (watches included), counts answers by status code, and when
 * told answers every Nth request itself with 429 and a Retry-After, as an overloaded API server does.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { writeFileSync } from 'node:fs';
import type * as k8s from '@kubernetes/client-node';

/** A running proxy. */
export interface KubeProxy {
  readonly url: string;
  /** Answers by status code (passed through), plus `injected429`. */
  readonly counts: Record<string, number>;
  /** Answer every `every`-th request with 429 (0: never). Watches are throttled too. */
  throttle(every: number, retryAfterSeconds?: number): void;
  /** Writes a kubeconfig pointing at the proxy; returns its path. */
  writeKubeconfig(path: string): string;
  close(): Promise<void>;
}

/** Starts the proxy for the cluster and admin user of `kc`. */
export async function startKubeProxy(kc: k8s.KubeConfig): Promise<KubeProxy> {
  const target = new URL(kc.getCurrentCluster()!.server);
  const tls: RequestOptions = {};
  await kc.applyToHTTPSOptions(tls);
  const counts: Record<string, number> = { injected429: 0 };
  let every = 0;
  let retryAfter = 1;
  let n = 0;
  const sockets = new Set<Socket>();

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    n++;
    if (every > 0 && n % every === 0) {
      counts.injected429 = (counts.injected429 ?? 0) + 1;
      req.resume();
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(retryAfter) }).end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message: 'too many requests (injected by the fault test)',
          reason: 'TooManyRequests',
          details: { retryAfterSeconds: retryAfter },
          code: 429,
        }),
      );
      return;
    }
    const upstream = httpsRequest(
      {
        ...tls,
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
      },
      (up) => {
        const code = String(up.statusCode ?? 0);
        counts[code] = (counts[code] ?? 0) + 1;
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
        up.on('error', () => res.destroy());
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  };

  const server: Server = createServer(handle);
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    counts,
    throttle(e, seconds = 1) {
      every = e;
      retryAfter = seconds;
    },
    writeKubeconfig(path) {
      writeFileSync(
        path,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [{ name: 'proxy', cluster: { server: url } }],
          users: [{ name: 'proxy', user: {} }],
          contexts: [{ name: 'proxy', context: { cluster: 'proxy', user: 'proxy' } }],
          'current-context': 'proxy',
        }),
      );
      return path;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
