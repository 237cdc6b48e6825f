/**
 * `homeostat/testing` itself (the scaffolded project's tests use it on success; here, its failures):
 * waits that run out fail with what was awaited and the last state seen, a start that fails half-way
 * stops what it started, and `stop()` may be called twice. The happy path runs in
 * test/integration/scaffold.test.ts, from the installed package.
 */
import { existsSync } from 'node:fs';
import { z } from 'zod';
import { stackDir } from '../../devstack';
import { defineOperator, definePlan, defineReconciler, terminal } from '../../reconcilers';
import { startTestEnvironment, type TestEnvironment, waitFor } from '../../testing';
import { randomSuffix } from '../support/harness';

const group = `gadgets-${randomSuffix(3)}.example.com`;
/** A Gadget of 7 parts is held in its step until the test releases it: its pass cannot end before. */
let releaseHeld: () => void = () => {};
const held = new Promise<void>((resolve) => (releaseHeld = resolve));
const gadgets = defineOperator({
  name: 'gadgets',
  reconcilers: [
    defineReconciler({
      plan: definePlan({
        group,
        version: 'v1',
        kind: 'Gadget',
        plural: 'gadgets',
        scope: 'Namespaced',
        steps: [{ name: 'assemble' }],
      }),
      schema: z.object({ parts: z.number().int().min(0).max(10) }),
      steps: {
        assemble: async ({ spec }) => {
          if (spec.parts === 0) throw terminal(new Error('a gadget of no parts cannot be assembled'));
          if (spec.parts === 7) await held;
          return { message: `${spec.parts} parts` };
        },
      },
    }),
  ],
});

const gadget = (name: string, parts: number) => ({
  apiVersion: `${group}/v1`,
  kind: 'Gadget',
  metadata: { name, namespace: 'default' },
  spec: { parts },
});

describe('homeostat/testing on the run’s stack (HOMEOSTAT_TEST_STACK: attached, left running)', () => {
  let env: TestEnvironment | undefined;
  beforeAll(async () => {
    env = await startTestEnvironment({ operator: gadgets, logLevel: 'error' });
  });
  afterAll(async () => {
    releaseHeld();
    await env?.stop();
    await env?.stop(); // a second stop is harmless
  });

  it('given a Gadget that reconciles, waitForCondition returns it Ready', async () => {
    const ready = await env!.waitForCondition(await env!.apply(gadget(`ok-${randomSuffix()}`, 3)));
    expect(ready.status?.phase).toBe('Ready');
  });

  it('given a spec change, waitForCondition waits for Ready at the generation the apply returned and never returns the stale Ready', async () => {
    const name = `changed-${randomSuffix()}`;
    const first = await env!.apply(gadget(name, 3));
    expect(first.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.metadata.resourceVersion).not.toBe('');
    expect(first.metadata.generation).toBe(1);
    expect((await env!.waitForReady(first)).status?.observedGeneration).toBe(1);

    const second = await env!.apply(gadget(name, 7)); // its step is held: the pass of generation 2 cannot end
    expect(second.metadata).toMatchObject({ uid: first.metadata.uid, generation: 2 });
    const stale = await env!.get(second);
    expect(stale?.status).toMatchObject({ observedGeneration: 1, phase: 'Ready' });
    await expect(env!.waitForCondition(second, 'Ready', 'True', 1_500)).rejects.toThrow(
      /to have Ready=True at generation 2; last seen: phase Ready, conditions \[.*\], observedGeneration 1 of generation 2/,
    );
    await expect(env!.waitForReady(second, { generation: 2, timeoutMs: 500 })).rejects.toThrow(/at generation 2/);
    const any = await env!.waitForCondition(second, 'Ready', 'True', { atGeneration: false, timeoutMs: 5_000 });
    expect(any.status?.observedGeneration).toBe(1);

    releaseHeld();
    const fresh = await env!.waitForCondition(second);
    expect(fresh.status).toMatchObject({ observedGeneration: 2, phase: 'Ready' });
  });

  it('given a Gadget that never becomes Ready, waitForCondition fails naming it, the condition and the last status seen', async () => {
    const name = `broken-${randomSuffix()}`;
    const broken = await env!.apply(gadget(name, 0));
    await env!.waitFor(async () => (await env!.get(broken))?.status?.phase === 'Degraded');
    await expect(env!.waitForCondition(broken, 'Ready', 'True', 1_000)).rejects.toThrow(
      new RegExp(
        `timed out after 1000 ms waiting for Gadget default/${name} to have Ready=True at generation 1; last seen: phase Degraded, ` +
          'conditions \\[.*Ready=False.*a gadget of no parts cannot be assembled',
      ),
    );
  });

  it('given an object that stays because of a finalizer, waitForDeletion fails naming the finalizer', async () => {
    const config = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `held-${randomSuffix()}`, namespace: 'default', finalizers: ['example.com/hold'] },
    };
    await env!.apply(config);
    await env!.delete(config);
    await expect(env!.waitForDeletion(config, 500)).rejects.toThrow(
      /ConfigMap default\/held-\w+ to be gone; it is still there \(deleting since .*\) with finalizers \[example\.com\/hold\]/,
    );
    await env!.apply({ ...config, metadata: { ...config.metadata, finalizers: [] } });
    await env!.waitForDeletion(config, 10_000);
    await env!.delete(config); // deleting what is gone is success
  });

  it('given a check that keeps throwing, waitFor fails with the last error', async () => {
    let calls = 0;
    await expect(
      waitFor(
        () => {
          calls += 1;
          throw new Error(`not yet (${calls})`);
        },
        { timeoutMs: 300, intervalMs: 50, what: 'the impossible' },
      ),
    ).rejects.toThrow(/timed out after 300 ms waiting for the impossible \(last error: not yet \(\d+\)\)/);
    expect(calls).toBeGreaterThan(2);
  });
});

describe('homeostat/testing starting a stack of its own', () => {
  it('given an operator owning a kind the API server does not serve, the start fails naming it and stops the stack it started', async () => {
    const name = `testing-${randomSuffix()}`;
    const unservable = defineOperator({
      name: 'unservable',
      reconcilers: [
        defineReconciler({
          plan: definePlan({
            group,
            version: 'v1',
            kind: 'Widget',
            plural: 'widgets',
            scope: 'Namespaced',
            owns: [{ apiVersion: 'nowhere.example.com/v1', kind: 'Phantom' }],
            steps: [{ name: 'noop' }],
          }),
          schema: z.object({}),
          steps: { noop: async () => {} },
        }),
      ],
    });
    await expect(
      startTestEnvironment({ operator: unservable, name, env: {}, postgres: false, progress: () => {} }),
    ).rejects.toThrow(/Phantom/);
    expect(existsSync(stackDir(name))).toBe(false);
  }, 180_000);
});
