/**
 * The bridge's HTTP endpoints: `/healthz` (alive), `/readyz` (every reflector synced) and `/metrics`
 * (Prometheus text format).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Bridge } from './bridge';

/** Starts the HTTP server on `port` (0 for any free port) and resolves with the server and its port. */
export async function startHttpServer(
  bridge: Bridge,
  port: number,
  host = '0.0.0.0',
): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const reply = (status: number, body: string, type = 'text/plain; charset=utf-8'): void => {
      res.writeHead(status, { 'Content-Type': type });
      res.end(body);
    };
    if (path === '/healthz' || path === '/livez') {
      if (bridge.healthy) reply(200, 'ok\n');
      else reply(503, 'lease renewal overdue\n');
    } else if (path === '/readyz') {
      if (bridge.ready) reply(200, 'ok\n');
      else reply(503, 'reflectors not synced\n');
    } else if (path === '/metrics') {
      bridge.metrics.registry.metrics().then(
        (text) => reply(200, text, bridge.metrics.registry.contentType),
        (err: unknown) => reply(500, String(err)),
      );
    } else {
      reply(404, 'not found\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return { server, port: (server.address() as AddressInfo).port };
}
