import { ObjectCache, lastAppliedAnnotation, parseBridgeConfig, trimObject } from '../../../informer-bridge';

describe('cache', () => {
  it('given an object with managedFields and the last-applied annotation, it stores it without them', () => {
    const obj = {
      metadata: {
        name: 'a',
        namespace: 'n',
        managedFields: [{ manager: 'kubectl', fieldsV1: { 'f:spec': {} } }],
        annotations: { [lastAppliedAnnotation]: '{"big":"copy"}', keep: 'me' },
      },
      spec: { x: 1 },
    };
    expect(trimObject(obj)).toEqual({
      metadata: { name: 'a', namespace: 'n', annotations: { keep: 'me' } },
      spec: { x: 1 },
    });
    const cache = new ObjectCache();
    const { previous } = cache.put(obj);
    expect(previous).toBeUndefined();
    expect(cache.get('n/a')?.metadata.managedFields).toBeUndefined();
    expect(cache.estimatedBytes).toBeGreaterThan(0);
    cache.delete('n/a');
    expect(cache.estimatedBytes).toBe(0);
  });
});

describe('config', () => {
  const resources = JSON.stringify([
    { group: 'homeostat.dev', version: 'v1alpha1', plural: 'apps', kind: 'App', namespaced: true },
  ]);

  it('given the minimal environment, it applies the documented defaults', () => {
    const c = parseBridgeConfig({ HOMEOSTAT_BRIDGE_RESOURCES: resources });
    expect(c).toMatchObject({
      HOMEOSTAT_TASK_QUEUE: 'homeostat',
      HOMEOSTAT_BRIDGE_LEASE_SECONDS: 15,
      HOMEOSTAT_BRIDGE_RENEW_DEADLINE_SECONDS: 10,
      HOMEOSTAT_BRIDGE_RETRY_PERIOD_SECONDS: 2,
      HOMEOSTAT_BRIDGE_LEADER_ELECTION: true,
    });
    expect(Object.isFrozen(c)).toBe(true);
  });

  it('given invalid values, it lists every issue', () => {
    expect(() =>
      parseBridgeConfig({ HOMEOSTAT_BRIDGE_RESOURCES: '[{"kind":"App"}]', HOMEOSTAT_BRIDGE_PORT: 'x' }),
    ).toThrow(/HOMEOSTAT_BRIDGE_RESOURCES\.0\.group[\s\S]*HOMEOSTAT_BRIDGE_PORT/);
    expect(() => parseBridgeConfig({ HOMEOSTAT_BRIDGE_RESOURCES: 'not json' })).toThrow(/not JSON/);
  });
});
