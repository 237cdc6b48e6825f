/** etcd, run the way envtest runs it: loopback, free ports, no fsync. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type ManagedProcess, startProcess, waitUntil } from '../processes';
import { type ComponentContext, logFile, readyOrStop } from './context';

/** Starts etcd the way envtest does (loopback, free ports, no fsync) and waits for `/health`. */
export async function startEtcd(ctx: ComponentContext): Promise<ManagedProcess> {
  const dataDir = join(ctx.dir, 'etcd');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const client = `http://127.0.0.1:${ctx.ports.etcdClient}`;
  const args = [
    '--name',
    'homeostat',
    '--data-dir',
    dataDir,
    '--listen-client-urls',
    client,
    '--advertise-client-urls',
    client,
    '--listen-peer-urls',
    `http://127.0.0.1:${ctx.ports.etcdPeer}`,
    '--initial-advertise-peer-urls',
    `http://127.0.0.1:${ctx.ports.etcdPeer}`,
    '--initial-cluster',
    `homeostat=http://127.0.0.1:${ctx.ports.etcdPeer}`,
    '--unsafe-no-fsync=true',
    '--log-level',
    'warn',
  ];
  const proc = startProcess({ name: 'etcd', executable: ctx.binaries.etcd, args, logFile: logFile(ctx, 'etcd') });
  return readyOrStop(proc, () =>
    waitUntil(
      'etcd',
      async () => {
        const res = await fetch(`${client}/health`, { signal: AbortSignal.timeout(2000) });
        const body = (await res.json()) as { health?: string };
        return body.health === 'true';
      },
      { timeoutMs: 30_000, proc },
    ),
  );
}
