/**
 * homeostat's API clients reuse their TLS connections to the API server: client-node alone opens a
 * new connection (TCP and TLS handshake, TLS context built again) for every request. Connections
 * are counted at `https.Agent.prototype.createConnection` (what every https agent calls for each new
 * one), against the run's real API server.
 */
import * as https from 'node:https';
import * as k8s from '@kubernetes/client-node';
import { shareConnections, tlsOptionsKey } from '../../core/kube-connections';
import { useStack } from '../support/harness';

describe('kept-alive connections to the API server', () => {
  const t = useStack();

  /** Runs `fn` and returns how many TLS connections it opened. */
  async function socketsOpenedBy(fn: () => Promise<void>): Promise<number> {
    const connect = jest.spyOn(https.Agent.prototype, 'createConnection');
    try {
      await fn();
      return connect.mock.calls.length;
    } finally {
      connect.mockRestore();
    }
  }

  const twentyReads = (kc: k8s.KubeConfig) => async (): Promise<void> => {
    const core = kc.makeApiClient(k8s.CoreV1Api);
    for (let i = 0; i < 20; i++) await core.readNamespace({ name: t.namespace });
  };

  const fresh = (): k8s.KubeConfig => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(t.endpoints.kubeconfig);
    return kc;
  };

  it('given 20 reads through client-node as it comes, each opens its own connection', async () => {
    expect(await socketsOpenedBy(twentyReads(fresh()))).toBeGreaterThanOrEqual(20);
  });

  it('given 20 reads through a shared kubeconfig, one connection carries them all, and a second call changes nothing', async () => {
    const kc = shareConnections(fresh());
    expect(shareConnections(kc)).toBe(kc);
    expect(await socketsOpenedBy(twentyReads(kc))).toBe(1);
    // Another API client of the same kubeconfig reuses the same pool.
    expect(
      await socketsOpenedBy(async () => {
        await kc.makeApiClient(k8s.CustomObjectsApi).listClusterCustomObject({
          group: 'apiextensions.k8s.io',
          version: 'v1',
          plural: 'customresourcedefinitions',
          limit: 1,
        });
      }),
    ).toBe(0);
  });

  it('given concurrent requests, the pool grows to what is in flight and no further', async () => {
    const kc = shareConnections(fresh());
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const burst = () => Promise.all(Array.from({ length: 8 }, () => core.readNamespace({ name: t.namespace })));
    const first = await socketsOpenedBy(async () => {
      await burst();
    });
    expect(first).toBeGreaterThanOrEqual(1);
    expect(first).toBeLessThanOrEqual(8);
    expect(await socketsOpenedBy(async () => void (await burst()))).toBe(0);
  });

  it('given another client certificate or CA, the TLS options key differs (connections are never shared across identities)', () => {
    const base = { ca: Buffer.from('ca-1'), cert: Buffer.from('cert-1'), key: Buffer.from('key-1') };
    expect(tlsOptionsKey(base)).toBe(tlsOptionsKey({ ...base, cert: Buffer.from('cert-1') }));
    expect(tlsOptionsKey({ ...base, cert: Buffer.from('cert-2') })).not.toBe(tlsOptionsKey(base));
    expect(tlsOptionsKey({ ...base, key: Buffer.from('key-2') })).not.toBe(tlsOptionsKey(base));
    expect(tlsOptionsKey({ ...base, ca: Buffer.from('ca-2') })).not.toBe(tlsOptionsKey(base));
    expect(tlsOptionsKey({ ...base, rejectUnauthorized: false })).not.toBe(tlsOptionsKey(base));
    // Pieces cannot be shifted from one field to the next to collide.
    expect(tlsOptionsKey({ cert: 'ab', key: 'c' })).not.toBe(tlsOptionsKey({ cert: 'a', key: 'bc' }));
  });
});
