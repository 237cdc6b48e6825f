import { startWorkerHttpServer } from '../../workers/http-server';

describe('worker operations endpoint', () => {
  it('given a worker that is not yet polling, /readyz is 503 until it is; /healthz and /metrics answer', async () => {
    let ready = false;
    const { server, port } = await startWorkerHttpServer(0, () => ready);
    try {
      const get = (path: string) => fetch(`http://127.0.0.1:${port}${path}`);
      expect((await get('/healthz')).status).toBe(200);
      expect((await get('/readyz')).status).toBe(503);
      ready = true;
      expect((await get('/readyz')).status).toBe(200);
      const metrics = await get('/metrics');
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain('homeostat_worker_process_cpu_seconds_total');
      expect((await get('/nope')).status).toBe(404);
    } finally {
      server.close();
    }
  });
});
