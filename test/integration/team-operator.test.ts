/**
 * A team's own operator, defined only with the public authoring API (test/fixtures/operators/widgets.ts),
 * runs on homeostat's generic workflow code: no plan of it is bundled anywhere, the plan reaches the
 * workflow with each observation (recorded in history), a step's outputs reach the step that depends
 * on it, and its generated CRD refuses bad specs at admission.
 */
import * as k8s from '@kubernetes/client-node';
import { defaultPayloadConverter } from '@temporalio/common';
import pino from 'pino';
import { stateQuery, workflowIdFor } from '../../core/definitions';
import widgets from '../fixtures/operators/widgets';
import { randomSuffix, useStack } from '../support/harness';
import { activityResults } from '../support/histories';
import { installOperatorCrds, type InProcessHomeostat, startInProcessHomeostat } from '../support/homeostat';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const group = 'widgets.example.com';

interface Widget {
  metadata: { name: string; generation?: number };
  spec: { colour: string };
  status?: { phase?: string; observedGeneration?: number };
}

describe("a team's operator on the generic workflow", () => {
  const t = useStack();
  let homeostat: InProcessHomeostat | undefined;

  beforeAll(async () => {
    await installOperatorCrds(t, widgets);
    homeostat = await startInProcessHomeostat(t, {
      taskQueue: `widgets-${randomSuffix()}`,
      logger: pino({ level: 'warn' }),
      operator: widgets,
      bridge: {},
    });
  }, 120_000);

  afterAll(async () => {
    await homeostat?.stop();
  });

  const get = async (name: string): Promise<Widget> =>
    (await t.custom.getNamespacedCustomObject({
      group,
      version: 'v1',
      namespace: t.namespace,
      plural: 'widgets',
      name,
    })) as Widget;

  async function waitReady(name: string, generation: number): Promise<Widget> {
    let last: Widget | undefined;
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(250)) {
      last = await get(name);
      if (last.status?.phase === 'Ready' && last.status.observedGeneration === generation) return last;
    }
    throw new Error(`${name} not Ready at generation ${generation}: ${JSON.stringify(last?.status)}`);
  }

  it('given a Widget, it becomes Ready and the ship step saw the paint step’s output; a spec change flows through', async () => {
    const name = `w-${randomSuffix()}`;
    await t.custom.createNamespacedCustomObject({
      group,
      version: 'v1',
      namespace: t.namespace,
      plural: 'widgets',
      body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name }, spec: { colour: 'red' } },
    });
    await waitReady(name, 1);
    const handle = t.temporal.workflow.getHandle(
      workflowIdFor({ group, kind: 'Widget', namespace: t.namespace, name }),
    );
    expect((await handle.query(stateQuery)).steps.ship?.message).toBe('shipped red');

    await t.custom.patchNamespacedCustomObject(
      { group, version: 'v1', namespace: t.namespace, plural: 'widgets', name, body: { spec: { colour: 'blue' } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await waitReady(name, 2);
    expect((await handle.query(stateQuery)).steps.ship?.message).toBe('shipped blue');

    // The plan the workflow ran is in its history, with each observation: replay needs no copy of it.
    const history = await handle.fetchHistory();
    const observed = activityResults(history)
      .map((p) => defaultPayloadConverter.fromPayload<{ plan?: { kind: string; steps: { name: string }[] } }>(p))
      .filter((r) => r?.plan);
    expect(observed.length).toBeGreaterThanOrEqual(2);
    expect(observed[0]!.plan).toMatchObject({ kind: 'Widget', steps: [{ name: 'paint' }, { name: 'ship' }] });
  }, 120_000);

  it.each([
    ['a colour outside the enum', { colour: 'green' }, /Unsupported value: \\?"green\\?"/],
    ['a colour of 100 KiB', { colour: 'r'.repeat(100 * 1024) }, /Unsupported value/],
    ['no colour', {}, /colour: Required value/],
  ])('given %s, the generated CRD refuses the Widget at admission', async (_what, spec, message) => {
    const err = await t.custom
      .createNamespacedCustomObject({
        group,
        version: 'v1',
        namespace: t.namespace,
        plural: 'widgets',
        body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: `bad-${randomSuffix()}` }, spec },
      })
      .then(
        () => undefined,
        (e: { code?: number; body?: string }) => e,
      );
    expect(err?.code).toBe(422);
    expect(String(err?.body)).toMatch(message);
  });
});
