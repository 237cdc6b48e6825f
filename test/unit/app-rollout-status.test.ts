/**
 * What makes an App Ready (issue 14, item 2): its Deployment's rollout judged as `kubectl rollout
 * status` judges it, and the status fields a step may report, checked before they reach history.
 */
import type { V1Deployment } from '@kubernetes/client-node';
import { statusFieldsProblem } from '../../activities/step-result';
import { rolloutOf } from '../../builtin/app/reconciler';
import { builtinOperator } from '../../builtin';
import { customResourceDefinition } from '../../reconcilers';
import { z } from 'zod';

const deployment = (generation: number, status: V1Deployment['status']): V1Deployment => ({
  metadata: { name: 'web', generation },
  ...(status ? { status } : {}),
});

describe('App rollout: Ready only when every desired replica is updated, ready and available', () => {
  it('given a Deployment its controller has not seen yet, it is progressing with 0 ready', () => {
    expect(rolloutOf(deployment(1, undefined), 3)).toEqual({
      ready: 0,
      progress: '0/3 replicas ready (the new spec is not rolled out yet)',
    });
    expect(rolloutOf(deployment(2, { observedGeneration: 1, readyReplicas: 3 }), 3).progress).toContain(
      'not rolled out yet',
    );
  });

  it('given replicas still updating, old ones terminating or not yet available, it says which', () => {
    const s = { observedGeneration: 2 };
    expect(rolloutOf(deployment(2, { ...s, readyReplicas: 3, updatedReplicas: 1, replicas: 4 }), 3)).toEqual({
      ready: 3,
      progress: '3/3 replicas ready, 1/3 updated',
    });
    expect(
      rolloutOf(deployment(2, { ...s, readyReplicas: 3, updatedReplicas: 3, replicas: 4, availableReplicas: 3 }), 3),
    ).toEqual({ ready: 3, progress: '3/3 replicas ready, 1 old replicas terminating' });
    expect(
      rolloutOf(deployment(2, { ...s, readyReplicas: 2, updatedReplicas: 3, replicas: 3, availableReplicas: 2 }), 3),
    ).toEqual({ ready: 2, progress: '2/3 replicas ready' });
    expect(
      rolloutOf(deployment(2, { ...s, readyReplicas: 3, updatedReplicas: 3, replicas: 3, availableReplicas: 1 }), 3),
    ).toEqual({ ready: 3, progress: '3/3 replicas ready, 1 available' });
  });

  it('given every replica updated, ready and available at the current generation, it is complete', () => {
    expect(
      rolloutOf(
        deployment(4, {
          observedGeneration: 4,
          readyReplicas: 3,
          updatedReplicas: 3,
          replicas: 3,
          availableReplicas: 3,
        }),
        3,
      ),
    ).toEqual({ ready: 3 });
    expect(rolloutOf(deployment(1, { observedGeneration: 1 }), 0)).toEqual({ ready: 0 });
  });
});

describe('status fields a step reports', () => {
  it('given plain values under lowerCamelCase names, they pass', () => {
    expect(statusFieldsProblem({ readyReplicas: 3, image: 'x', paused: false })).toBeUndefined();
  });

  it('given homeostat’s own fields, odd names, objects, NaN or too much, each is refused with its reason', () => {
    expect(statusFieldsProblem({ phase: 'Ready' })).toMatch(/phase is homeostat/);
    expect(statusFieldsProblem({ conditions: 'x' })).toMatch(/homeostat/);
    expect(statusFieldsProblem({ observedGeneration: 9 })).toMatch(/homeostat/);
    expect(statusFieldsProblem({ 'ready-replicas': 1 })).toMatch(/lowerCamelCase/);
    expect(statusFieldsProblem({ __proto__x: 1 })).toMatch(/lowerCamelCase/);
    expect(statusFieldsProblem({ nested: { a: 1 } })).toMatch(/not a string, finite number or boolean/);
    expect(statusFieldsProblem({ n: Number.NaN })).toMatch(/finite/);
    expect(statusFieldsProblem({ big: 'x'.repeat(5000) })).toMatch(/bytes; at most 4096/);
    expect(statusFieldsProblem(['a'])).toMatch(/not an object/);
    expect(statusFieldsProblem(null)).toMatch(/not an object/);
  });
});

describe('status fields in the CRD', () => {
  const plan = { group: 'example.com', version: 'v1', kind: 'Widget', plural: 'widgets', scope: 'Namespaced' as const };

  it('given the App, its status schema declares readyReplicas and a printer column shows it', () => {
    const app = builtinOperator.reconcilers.find((r) => r.plan.kind === 'App')!;
    const crd = customResourceDefinition(app.plan, app.schema, app.crd || undefined) as {
      spec: {
        versions: {
          schema: { openAPIV3Schema: { properties: { status: { properties: object } } } };
          additionalPrinterColumns: { jsonPath: string }[];
        }[];
      };
    };
    const version = crd.spec.versions[0]!;
    expect(version.schema.openAPIV3Schema.properties.status.properties).toMatchObject({
      readyReplicas: { type: 'integer' },
      phase: { type: 'string' },
    });
    expect(version.additionalPrinterColumns.map((c) => c.jsonPath)).toContain('.status.readyReplicas');
  });

  it('given a status field named like homeostat’s own, with an odd name or type, the CRD is refused naming each', () => {
    expect(() =>
      customResourceDefinition(plan, z.object({}), {
        status: {
          phase: { type: 'string' },
          'Bad-Name': { type: 'integer' },
          weird: { type: 'object' as 'string' },
        },
      }),
    ).toThrow(
      /status field phase is homeostat's own.*status field "Bad-Name" must be a lowerCamelCase.*type "object" must be one of/,
    );
  });

  it('given a status field declared as null or undefined (plain JavaScript), the CRD is refused with a message, not a TypeError', () => {
    for (const field of [null, undefined]) {
      expect(() =>
        customResourceDefinition(plan, z.object({}), {
          status: { readyReplicas: field as unknown as { type: 'integer' } },
        }),
      ).toThrow('status field "readyReplicas": type undefined must be one of integer, number, string, boolean');
    }
  });
});
