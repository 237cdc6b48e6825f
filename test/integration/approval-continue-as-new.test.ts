/**
 * An approval carried across continue-as-new (issue 28): a `Ledger` operator whose runs continue as new
 * after every pass (`maxPassesPerRun: 1`). An approval is for one generation and one preview, not for
 * one run: a step approved in one run, which then failed, runs in the next run's pass for the same
 * generation and preview without being asked again.
 */
import * as k8s from '@kubernetes/client-node';
import { temporal } from '@temporalio/proto';
import pino from 'pino';
import { decideApprovalUpdate, reconcileNowUpdate, stateQuery, workflowIdFor } from '../../core/definitions';
import {
  ledgerGroup as group,
  ledgerOperator,
  ledgerRecord,
  ledgerVersion as version,
} from '../fixtures/ledger/operator';
import { waitFor } from '../support/bridge';
import { randomSuffix, useStack } from '../support/harness';
import { installOperatorCrds, startInProcessHomeostat, type InProcessHomeostat } from '../support/homeostat';

const EventType = temporal.api.enums.v1.EventType;

describe('approval across continue-as-new', () => {
  let homeostat: InProcessHomeostat | undefined;
  afterAll(async () => {
    await homeostat?.stop();
  });
  const t = useStack();
  const suffix = randomSuffix();
  const operator = ledgerOperator(() => t.core, `approvals-can-${suffix}`, '1 hour', 1);

  beforeAll(async () => {
    await installOperatorCrds(t, operator);
    homeostat = await startInProcessHomeostat(t, {
      taskQueue: `approvals-can-${suffix}`,
      logger: pino({ level: 'warn' }),
      operator,
      bridge: {},
    });
  }, 120_000);

  it('given a step approved in one run that then failed, the next run’s pass for the same generation and preview runs it without asking again', async () => {
    const name = `carry-${randomSuffix()}`;
    const ref = { group, version, kind: 'Ledger', namespace: t.namespace, name };
    const handle = t.temporal.workflow.getHandle(workflowIdFor(ref));
    const state = () => handle.query(stateQuery);
    const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
    await t.custom.createNamespacedCustomObject({
      group,
      version,
      namespace: t.namespace,
      plural: 'ledgers',
      body: { apiVersion: `${group}/${version}`, kind: 'Ledger', metadata: { name }, spec: { size: 5 } },
    });
    await waitFor(async () => (await ledgerRecord(t.core, t.namespace, name)) === 5, 60_000, 200, 'record 5');
    const block = { namespace: t.namespace, name: `${name}-block` };
    await t.core.createNamespacedConfigMap({
      namespace: t.namespace,
      body: { metadata: { name: block.name }, data: { terminal: 'true' } },
    });
    await t.custom.patchNamespacedCustomObject(
      { group, version, namespace: t.namespace, plural: 'ledgers', name, body: { spec: { size: 2 } } },
      merge,
    );
    const waiting = await waitFor(async () => (await state()).awaitingApproval, 60_000, 200, 'the wait');
    expect(waiting.generation).toBe(2);
    await handle.executeUpdate(decideApprovalUpdate, {
      args: [{ ref, decision: 'approve', approver: 'alice', generation: 2, previewHash: waiting.previewHash }],
    });
    // The approved step fails terminally; the pass ends and the run continues as new.
    const failedRun = (await state()).run;
    await waitFor(
      async () => {
        const s = await state();
        return s.run > failedRun && s.phase === 'Degraded' && !s.reconciling;
      },
      60_000,
      200,
      'the next run, Degraded',
    );
    expect(await ledgerRecord(t.core, t.namespace, name)).toBe(5);

    await t.core.deleteNamespacedConfigMap(block);
    const nextRun = (await handle.describe()).runId;
    const outcome = await t.temporal.workflow
      .getHandle(handle.workflowId, nextRun)
      .executeUpdate(reconcileNowUpdate, { args: [{ ref }] });
    expect(outcome).toMatchObject({ result: 'ready', generation: 2 });
    expect(await ledgerRecord(t.core, t.namespace, name)).toBe(2);
    // Not asked again: the run that ran it checked the approval (same hash) and never waited.
    const events = (await t.temporal.workflow.getHandle(handle.workflowId, nextRun).fetchHistory()).events ?? [];
    const checks = events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'checkApproval');
    expect(checks.length).toBe(1);
    expect(
      events.some(
        (e) =>
          e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED &&
          e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'decide-approval',
      ),
    ).toBe(false);
  });
});
