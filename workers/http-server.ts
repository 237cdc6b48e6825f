/**
 * The worker's operations endpoint: `/healthz` (the process answers), `/readyz` (the worker polls its
 * task queue) and `/metrics` (Prometheus: process metrics and the reconcile step outcomes the
 * activities report).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Registry } from 'prom-client';

/** The worker's Prometheus registry. */
export const workerRegistry = new Registry();
collectDefaultMetrics({ register: workerRegistry, prefix: 'homeostat_worker_' });

/** Starts the endpoint; `port` 0 takes any free port. Resolves with the server and its port. */
export function startWorkerHttpServer(port: number, isReady: () => boolean): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (path === '/readyz') {
      const ready = isReady();
      res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' }).end(ready ? 'ok\n' : 'not polling\n');
    } else if (path === '/metrics') {
      workerRegistry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': workerRegistry.contentType }).end(text),
        () => res.writeHead(500).end(),
      );
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => resolve({ server, port: (server.address() as AddressInfo).port }));
  });
}
