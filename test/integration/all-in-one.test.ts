/**
 * `homeostat all`: the worker, the bridge and the API in one process reconcile an App to Ready, serve
 * the API and each component's endpoints, and stop gracefully on SIGTERM.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { randomSuffix, useStack } from '../support/harness';
import { installBuiltinCrds } from '../support/homeostat';

const cli = join(__dirname, '../../cli/homeostat.ts');

describe('homeostat all', () => {
  const t = useStack();
  beforeAll(() => installBuiltinCrds(t));

  it('given one process, an App reaches Ready, the API answers with a static token, and SIGTERM exits 0', async () => {
    const token = randomSuffix(16);
    const child = spawn(process.execPath, ['--import', 'tsx', cli, 'all'], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? tmpdir(),
        KUBECONFIG: t.endpoints.kubeconfig,
        TEMPORAL_ADDRESS: t.endpoints.temporalAddress,
        TEMPORAL_NAMESPACE: t.endpoints.temporalNamespace,
        HOMEOSTAT_TASK_QUEUE: `all-${randomSuffix()}`,
        HOMEOSTAT_BRIDGE_NAMESPACE: t.namespace,
        HOMEOSTAT_BRIDGE_LEADER_ELECTION: 'false',
        HOMEOSTAT_API_PORT: '0',
        HOMEOSTAT_API_HOST: '127.0.0.1',
        HOMEOSTAT_WORKER_PORT: '0',
        HOMEOSTAT_BRIDGE_PORT: '0',
        HOMEOSTAT_API_STATIC_TOKENS: `${token}=tester:system:masters`,
        // Local use, on 127.0.0.1: plain HTTP and a static token, both explicitly insecure.
        HOMEOSTAT_API_INSECURE_HTTP: 'true',
        HOMEOSTAT_API_INSECURE_STATIC_TOKENS: 'true',
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    try {
      const app = k8s.loadYaml<Record<string, unknown>>(
        readFileSync(join(__dirname, '../../examples/30-pony-spawner-app.yaml'), 'utf8'),
      );
      await t.custom.createNamespacedCustomObject({
        group: 'homeostat.dev',
        version: 'v1alpha1',
        namespace: t.namespace,
        plural: 'apps',
        body: { ...app, metadata: { name: 'solo', namespace: t.namespace } },
      });
      const deadline = Date.now() + 180_000;
      let phase: string | undefined;
      while (phase !== 'Ready' && Date.now() < deadline && child.exitCode === null) {
        await new Promise((r) => setTimeout(r, 300));
        const o = (await t.custom.getNamespacedCustomObject({
          group: 'homeostat.dev',
          version: 'v1alpha1',
          namespace: t.namespace,
          plural: 'apps',
          name: 'solo',
        })) as { status?: { phase?: string } };
        phase = o.status?.phase;
      }
      expect({ phase, exitCode: child.exitCode }).toEqual({ phase: 'Ready', exitCode: null });

      const address = /"address":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out)?.[1];
      expect(address).toBeDefined();
      const state = await fetch(`${address}/v1/objects/homeostat.dev/v1alpha1/App/${t.namespace}/solo`, {
        headers: { authorization: `Bearer ${token}` },
      });
      expect(state.status).toBe(200);
      expect(await state.json()).toMatchObject({ state: { phase: 'Ready' } });
      // The worker's and the bridge's endpoints run beside the API.
      const ports = [...out.matchAll(/"port":(\d+),"msg":"http listening"/g)].map((m) => m[1]);
      expect(ports).toHaveLength(2);
      for (const port of ports) expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
