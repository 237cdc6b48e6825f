import { fieldDiff, redacted } from '../../core/field-diff';
import { stepsWouldChange } from '../../core/dry-run';

describe('field diff of a dry run', () => {
  const live = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web',
      resourceVersion: '1',
      generation: 1,
      uid: 'u',
      creationTimestamp: 'then',
      managedFields: [{ manager: 'a' }],
      labels: { 'app.kubernetes.io/name': 'web' },
    },
    spec: { replicas: 1, template: { spec: { containers: [{ name: 'app', image: 'web:1' }] } } },
    status: { readyReplicas: 1 },
  };

  it('given a changed image, it lists that one leaf with old and new values, ignoring server-managed fields and status', () => {
    const next = structuredClone(live);
    next.spec.template.spec.containers[0]!.image = 'web:2';
    next.metadata.resourceVersion = '2';
    next.metadata.generation = 2;
    next.metadata.managedFields = [{ manager: 'b' }];
    next.status.readyReplicas = 0;
    expect(fieldDiff(live, next)).toEqual([
      { path: 'spec.template.spec.containers[0].image', old: 'web:1', new: 'web:2' },
    ]);
  });

  it('given no live object, it lists every leaf as new; added and removed keys have only new or old; odd keys are quoted', () => {
    expect(fieldDiff(undefined, { kind: 'ConfigMap', data: { a: '1' } })).toEqual([
      { path: 'data.a', new: '1' },
      { path: 'kind', new: 'ConfigMap' },
    ]);
    const next = { ...live, metadata: { ...live.metadata, labels: { team: 'a' } } };
    expect(fieldDiff(live, next)).toEqual([
      { path: 'metadata.labels["app.kubernetes.io/name"]', old: 'web' },
      { path: 'metadata.labels.team', new: 'a' },
    ]);
  });

  it('given a Secret, it reports its changed data redacted', () => {
    const a = { kind: 'Secret', data: { password: 'czE=', host: 'aA==' } };
    const b = { kind: 'Secret', data: { password: 'czI=', host: 'aA==' } };
    expect(fieldDiff(a, b)).toEqual([{ path: 'data.password', old: redacted, new: redacted }]);
    expect(JSON.stringify(fieldDiff(undefined, b))).not.toContain('czI=');
  });

  it('given steps, it says a pass would change something unless every step previewed and changes nothing', () => {
    const quiet = { name: 's', outcome: 'previewed' as const, children: [], changes: [] };
    expect(stepsWouldChange([quiet])).toBe(false);
    expect(stepsWouldChange([{ ...quiet, outcome: 'no-preview' }])).toBe(true);
    expect(stepsWouldChange([{ ...quiet, changes: [{ action: 'create', target: 'role a' }] }])).toBe(true);
    expect(
      stepsWouldChange([
        { ...quiet, children: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', action: 'unchanged', fields: [] }] },
      ]),
    ).toBe(false);
  });
});
