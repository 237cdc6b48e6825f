/**
 * A small HTTP proxy in front of kube-apiserver, for fault tests: homeostat's processes talk plain
 * HTTP to it (a kubeconfig without credentials; the client allows plain HTTP only with skip-TLS-verify),
 * it forwards every request over TLS with the admin client certificate, streams answers (watches
 * included), counts answers by status code; when told, it runs a hook before each status patch (a
 * concurrent writer that wins the race) and answers a share of the requests itself with 429 and a
 * Retry-After, as an overloaded API server does.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { writeFileSync } from 'node:fs';
import type * as k8s from '@kubernetes/client-node';

/** A running proxy. */
export interface KubeProxy {
  readonly url: string;
  /** Answers by status code (passed through), plus `injected429` and `heldStatusPatches`. */
  readonly counts: Record<string, number>;
  /**
   * Runs `hook` (with the request path) before forwarding each PATCH of a status subresource, e.g. a
   * concurrent write that lands between the client's read and its write; `undefined` removes it.
   */
  beforeStatusPatch(hook: ((path: string) => Promise<void>) | undefined): void;
  /**
   * Answer one request in `every` with 429 (0: never), at random: a fixed every-Nth pattern can line up
   * with a client's retry loop and starve it forever. Watches are throttled too.
   */
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
  let statusPatchHook: ((path: string) => Promise<void>) | undefined;
  const sockets = new Set<Socket>();

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const hook = statusPatchHook;
    if (hook && req.method === 'PATCH' && /\/status(\?|$)/.test(req.url ?? '')) {
      counts.heldStatusPatches = (counts.heldStatusPatches ?? 0) + 1;
      req.pause();
      hook(req.url!.split('?')[0]!).then(
        () => forward(req, res),
        () => forward(req, res),
      );
      return;
    }
    forward(req, res);
  };

  const forward = (req: IncomingMessage, res: ServerResponse): void => {
    if (every > 0 && Math.random() < 1 / every) {
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
        if (process.env.FAULTS_PROXY_DEBUG) process.stderr.write(`proxy ${req.method} ${req.url} ${code}\n`);
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
    beforeStatusPatch(hook) {
      statusPatchHook = hook;
    },
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
          clusters: [{ name: 'proxy', cluster: { server: url, 'insecure-skip-tls-verify': true } }],
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
