/**
 * Tenant isolation, history (issue 31): a tenant of an operator whose schema sets no size limit cannot
 * make homeostat record a near-megabyte spec in every pass. A spec over 512 KiB of JSON is `Invalid`
 * (and not recorded); a spec already recorded in a run is named by its digest afterwards, so a hundred
 * passes over a 500 KiB spec grow the object's history by less than two copies of it. History sizes
 * are Temporal's own (`historySizeBytes` of each run, summed over the runs continue-as-new chained).
 */
import type { temporal } from '@temporalio/proto';
import pino from 'pino';
import { reconcileNowUpdate, workflowIdFor, type ObjectRef } from '../../core/definitions';
import blobs from '../fixtures/operators/blobs';
import { randomSuffix, useStack } from '../support/harness';
import { installOperatorCrds, type InProcessHomeostat, startInProcessHomeostat } from '../support/homeostat';
import { waitFor } from '../support/bridge';

interface Blob {
  status?: { phase?: string; conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

describe('tenant isolation: a bounded history per object', () => {
  const t = useStack();
  const group = 'blobs.example.com';
  let homeostat: InProcessHomeostat | undefined;

  beforeAll(async () => {
    await installOperatorCrds(t, blobs);
    homeostat = await startInProcessHomeostat(t, {
      taskQueue: `blobs-${randomSuffix()}`,
      logger: pino({ level: 'warn' }),
      operator: blobs,
      bridge: {},
    });
  }, 120_000);

  afterAll(async () => {
    await homeostat?.stop();
  });

  const ref = (name: string): ObjectRef => ({ group, version: 'v1', kind: 'Blob', namespace: t.namespace, name });
  /** A spec whose JSON is exactly `bytes` long. */
  const specOf = (bytes: number) => ({ data: 'x'.repeat(bytes - '{"data":""}'.length) });
  const create = (name: string, spec: object) =>
    t.custom.createNamespacedCustomObject({
      group,
      version: 'v1',
      namespace: t.namespace,
      plural: 'blobs',
      body: { apiVersion: `${group}/v1`, kind: 'Blob', metadata: { name }, spec },
    });
  const blob = async (name: string): Promise<Blob> =>
    (await t.custom.getNamespacedCustomObject({
      group,
      version: 'v1',
      namespace: t.namespace,
      plural: 'blobs',
      name,
    })) as Blob;

  /** The history size of every run of the object's workflow, summed (Temporal's `historySizeBytes`). */
  async function historyBytes(name: string): Promise<{ bytes: number; runs: number }> {
    const workflowId = workflowIdFor(ref(name));
    let runId: string | undefined = (await t.temporal.workflow.getHandle(workflowId).describe()).runId;
    let bytes = 0;
    let runs = 0;
    while (runId) {
      const { workflowExecutionInfo } = await t.temporal.workflowService.describeWorkflowExecution({
        namespace: t.endpoints.temporalNamespace,
        execution: { workflowId, runId },
      });
      bytes += Number(workflowExecutionInfo?.historySizeBytes ?? 0);
      runs += 1;
      // Only the first event (the start names the run it continued), not the whole history.
      const first: { history?: temporal.api.history.v1.IHistory | null } =
        await t.temporal.workflowService.getWorkflowExecutionHistory({
          namespace: t.endpoints.temporalNamespace,
          execution: { workflowId, runId },
          maximumPageSize: 1,
        });
      runId = first.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
    }
    return { bytes, runs };
  }

  it('given a 1 MiB spec on an operator whose schema sets no limit, the object is Invalid saying so, and its history does not hold it', async () => {
    await create('huge', specOf(1024 * 1024));
    await waitFor(async () => (await blob('huge')).status?.phase === 'Invalid', 60_000, 250, 'huge Invalid');
    const readyCondition = (await blob('huge')).status?.conditions?.find((c) => c.type === 'Ready');
    expect(readyCondition).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
    // The stored spec is the 1 MiB written, plus the fields the CRD defaults (`note: ''`).
    const bytes = Number(/spec is (\d+) bytes as JSON/.exec(readyCondition?.message ?? '')?.[1]);
    expect(bytes).toBeGreaterThanOrEqual(1024 * 1024);
    expect(readyCondition?.message).toContain("over homeostat's limit of 524288 bytes (512 KiB)");
    expect((await historyBytes('huge')).bytes).toBeLessThan(64 * 1024);
  }, 120_000);

  it('given a 500 KiB spec, 100 passes grow its history by less than two copies of it', async () => {
    const specBytes = 500 * 1024;
    await create('big', specOf(specBytes));
    await waitFor(async () => (await blob('big')).status?.phase === 'Ready', 60_000, 250, 'big Ready');
    const handle = t.temporal.workflow.getHandle(workflowIdFor(ref('big')));
    // The first pass recorded the spec once; wait for it to be over before measuring.
    await handle.executeUpdate(reconcileNowUpdate, { args: [{ ref: ref('big') }] });
    const before = await historyBytes('big');
    for (let i = 0; i < 100; i++) {
      const outcome = await handle.executeUpdate(reconcileNowUpdate, { args: [{ ref: ref('big') }] });
      expect(outcome.result).toBe('ready');
      // Both steps ran on the whole spec: the local one given it, the regular one by its digest.
      expect(outcome.steps.check?.message).toBe(`${specBytes - 11} characters`);
    }
    const after = await historyBytes('big');
    const grown = after.bytes - before.bytes;
    console.log(
      `history of a ${specBytes}-byte spec: ${before.bytes} bytes (${before.runs} runs) before 100 passes, ` +
        `${after.bytes} bytes (${after.runs} runs) after: grew ${grown} bytes (${(grown / specBytes).toFixed(2)} copies)`,
    );
    expect(grown).toBeLessThan(2 * specBytes);
  }, 600_000);
});
