/**
 * The worker's operations endpoint: `/healthz` (the process answers), `/readyz` (the worker polls its
 * task queue) and `/metrics` (Prometheus, see {@link WorkerMetrics}).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WorkerMetrics } from './metrics';

/** Starts the endpoint; `port` 0 takes any free port. Resolves with the server and its port. */
export function startWorkerHttpServer(
  port: number,
  isReady: () => boolean,
  metrics: WorkerMetrics = new WorkerMetrics(),
): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (path === '/readyz') {
      const ready = isReady();
      res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' }).end(ready ? 'ok\n' : 'not polling\n');
    } else if (path === '/metrics') {
      metrics.metrics().then(
        (text) => res.writeHead(200, { 'content-type': metrics.contentType }).end(text),
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
