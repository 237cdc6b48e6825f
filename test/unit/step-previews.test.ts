/**
 * Step previews for dry runs: `defineReconciler` takes a step as its function or as `{ run, preview }`
 * (a preview function, or `'children-only'`), keeps the step functions where the runtime finds them,
 * and refuses a preview of another shape.
 */
import { z } from 'zod';
import { definePlan, defineReconciler, type StepPreview } from '../../reconcilers';

const plan = definePlan({
  group: 'example.com',
  version: 'v1',
  kind: 'Thing',
  plural: 'things',
  scope: 'Namespaced',
  steps: [{ name: 'config' }, { name: 'dns' }, { name: 'audit' }],
  cleanup: [{ name: 'release' }],
});

describe('step previews', () => {
  it('given steps with and without previews, it keeps every step function and the previews by step', async () => {
    const dns = async () => ({ message: 'upserted' });
    const r = defineReconciler({
      plan,
      schema: z.object({ host: z.string() }),
      steps: {
        config: { run: async () => {}, preview: 'children-only' },
        dns: { run: dns, preview: async ({ spec }) => [`UPSERT A ${spec.host}`] },
        audit: async () => {},
      },
      cleanup: { release: { run: async () => {}, preview: async () => [{ action: 'delete', target: 'record' }] } },
    });
    expect(Object.keys(r.steps).sort()).toEqual(['audit', 'config', 'dns', 'release']);
    expect(r.steps.dns).toBe(dns);
    expect(Object.keys(r.previews ?? {}).sort()).toEqual(['config', 'dns', 'release']);
    expect(r.previews?.config).toBe('children-only');
  });

  it('given steps without previews, it defines no previews (as before dry runs existed)', () => {
    const r = defineReconciler({
      plan,
      schema: z.object({}),
      steps: { config: async () => {}, dns: async () => {}, audit: async () => {} },
      cleanup: { release: async () => {} },
    });
    expect(r.previews).toBeUndefined();
  });

  it('given a preview that is neither a function nor children-only, it refuses the definition', () => {
    expect(() =>
      defineReconciler({
        plan,
        schema: z.object({}),
        steps: {
          config: { run: async () => {}, preview: 'everything' as unknown as StepPreview<object> },
          dns: async () => {},
          audit: async () => {},
        },
        cleanup: { release: async () => {} },
      }),
    ).toThrow("Thing: step config: preview must be a function or 'children-only'");
  });
});
