/**
 * Approval gates (issue 28) on the real stack: a test operator whose `Ledger` keeps an external record
 * (`test/fixtures/ledger/operator.ts`: a ConfigMap it writes with its own client, not a child) —
 * shrinking the record needs approval, dropping it on deletion always does. The API's
 * callers are ServiceAccounts with RBAC verbs of their own: `reconcile` alone never approves.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { temporal } from '@temporalio/proto';
import pino from 'pino';
import { apiKindsOf, buildApiServer, KubernetesAuth } from '../../api';
import { historyCost } from '../../bench/history-cost';
import { stateQuery, workflowIdFor, type ObjectState } from '../../core/definitions';
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

describe('approval gates', () => {
  let homeostat: InProcessHomeostat | undefined;
  afterAll(async () => {
    await homeostat?.stop();
  });
  const t = useStack();
  const suffix = randomSuffix();
  const log = pino({ level: 'warn' });
  let api: Awaited<ReturnType<typeof buildApiServer>>;
  let url = '';
  /** `homeostat …args` from the sources in a child process, as the approver (the API answering it runs here). */
  const cli = (...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> => {
    const tokenFile = join(t.stack.dir, `approver-${suffix}.token`);
    writeFileSync(tokenFile, tokens.approver, { mode: 0o600 });
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [
          '--import',
          'tsx',
          join(__dirname, '../../cli/homeostat.ts'),
          ...args,
          '--api',
          url,
          '--token-file',
          tokenFile,
        ],
        { env: { PATH: process.env.PATH ?? '', HOME: tmpdir() }, encoding: 'utf8', timeout: 120_000 },
        (err, stdout, stderr) =>
          resolve({ status: err ? ((err as { code?: unknown }).code as number | null) : 0, stdout, stderr }),
      );
    });
  };
  const tokens: Record<'approver' | 'operator' | 'outsider', string> = { approver: '', operator: '', outsider: '' };

  const external = (name: string): Promise<number | undefined> => ledgerRecord(t.core, t.namespace, name);
  const operator = ledgerOperator(() => t.core, `approvals-${suffix}`);

  const ledgers = {
    create: (name: string, size: number) =>
      t.custom.createNamespacedCustomObject({
        group,
        version,
        namespace: t.namespace,
        plural: 'ledgers',
        body: { apiVersion: `${group}/${version}`, kind: 'Ledger', metadata: { name }, spec: { size } },
      }),
    resize: (name: string, size: number) =>
      t.custom.patchNamespacedCustomObject(
        { group, version, namespace: t.namespace, plural: 'ledgers', name, body: { spec: { size } } },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
      ),
    get: async (name: string) =>
      (await t.custom
        .getNamespacedCustomObject({ group, version, namespace: t.namespace, plural: 'ledgers', name })
        .catch(() => undefined)) as
        | {
            metadata: { generation: number; uid: string };
            status?: {
              phase?: string;
              conditions?: { type: string; status: string; reason: string; message: string }[];
            };
          }
        | undefined,
    delete: (name: string) =>
      t.custom.deleteNamespacedCustomObject({ group, version, namespace: t.namespace, plural: 'ledgers', name }),
  };
  const ref = (name: string) => ({ group, version, kind: 'Ledger', namespace: t.namespace, name });
  const state = (name: string): Promise<ObjectState> =>
    t.temporal.workflow.getHandle(workflowIdFor(ref(name))).query(stateQuery);
  const phaseOf = async (name: string) => (await ledgers.get(name))?.status?.phase;
  const waitPhase = (name: string, phase: string, ms = 90_000) =>
    waitFor(async () => (await phaseOf(name)) === phase, ms, 200, `${name} ${phase}`);
  const decide = async (name: string, decision: 'approve' | 'reject', token: string, body?: unknown) => {
    const res = await api.inject({
      method: 'POST',
      url: `/v1/objects/${group}/${version}/Ledger/${t.namespace}/${name}/${decision}`,
      headers: { authorization: `Bearer ${token}` },
      ...(body !== undefined ? { payload: body as object } : {}),
    });
    return { status: res.statusCode, json: JSON.parse(res.body) as Record<string, unknown> };
  };

  /** A ServiceAccount of the test's namespace with `verbs` on ledgers, and its token for the API. */
  const callerToken = async (name: string, verbs: string[]): Promise<string> => {
    const ns = t.namespace;
    await t.core.createNamespacedServiceAccount({ namespace: ns, body: { metadata: { name } } });
    if (verbs.length > 0) {
      const rbac = t.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
      await rbac.createNamespacedRole({
        namespace: ns,
        body: { metadata: { name }, rules: [{ apiGroups: [group], resources: ['ledgers'], verbs }] },
      });
      await rbac.createNamespacedRoleBinding({
        namespace: ns,
        body: {
          metadata: { name },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
          subjects: [{ kind: 'ServiceAccount', name, namespace: ns }],
        },
      });
    }
    return (
      await t.core.createNamespacedServiceAccountToken({
        namespace: ns,
        name,
        body: { spec: { audiences: ['homeostat'] } },
      })
    ).status!.token;
  };

  beforeAll(async () => {
    await installOperatorCrds(t, operator);
    const taskQueue = `approvals-${suffix}`;
    homeostat = await startInProcessHomeostat(t, { taskQueue, logger: log, operator, bridge: {} });
    api = await buildApiServer({
      temporal: t.temporal,
      kc: t.kc,
      objects: k8s.KubernetesObjectApi.makeApiClient(t.kc),
      ...apiKindsOf(operator),
      auth: new KubernetesAuth({ kc: t.kc }),
      log,
      taskQueue,
    });
    url = await api.listen({ port: 0, host: '127.0.0.1' });
    t.defer(() => api.close());
    tokens.approver = await callerToken('approver', ['get', 'list', 'approve']);
    tokens.operator = await callerToken('operator', ['get', 'reconcile', 'plan']);
    tokens.outsider = await callerToken('outsider', []);
  }, 120_000);

  it('given a gated step whose rule says no (the record grows), its passes run no approval check: one activity per pass, the step’s own', async () => {
    const name = `grow-${randomSuffix()}`;
    await ledgers.create(name, 1);
    await waitPhase(name, 'Ready');
    for (const size of [2, 3]) {
      await ledgers.resize(name, size);
      await waitFor(async () => (await external(name)) === size, 60_000, 200, `record ${size}`);
    }
    await waitFor(async () => (await state(name)).lastOutcome?.generation === 3, 60_000);
    const { passes } = await state(name);
    const events = (await t.temporal.workflow.getHandle(workflowIdFor(ref(name))).fetchHistory()).events ?? [];
    const scheduled = events
      .map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter((n): n is string => n !== undefined && n !== null);
    // The rule was asked in observe (its preview computed there): no checkApproval, one record step per pass.
    expect(scheduled.filter((n) => n === 'checkApproval')).toEqual([]);
    expect(scheduled.length).toBe(passes);
    expect(await phaseOf(name)).toBe('Ready');
  });

  it('given an approved step whose first round fails and which then ends Reconciling in the same pass, the Approved, StepFailed and Progressing Events all exist', async () => {
    const name = `events-${randomSuffix()}`;
    await ledgers.create(name, 5);
    await waitPhase(name, 'Ready');
    const block = { namespace: t.namespace, name: `${name}-block` };
    await t.core.createNamespacedConfigMap({ namespace: t.namespace, body: { metadata: { name: block.name } } });
    await t.custom.patchNamespacedCustomObject(
      {
        group,
        version,
        namespace: t.namespace,
        plural: 'ledgers',
        name,
        body: { spec: { size: 2, progress: 'settling' } },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await waitFor(async () => (await state(name)).awaitingApproval?.generation === 2, 60_000);
    expect(await decide(name, 'approve', tokens.approver)).toMatchObject({ status: 200 });
    await waitPhase(name, 'Degraded'); // the first round failed (blocked)
    await t.core.deleteNamespacedConfigMap(block);
    await waitPhase(name, 'Reconciling');
    expect(await external(name)).toBe(2);
    const uid = (await ledgers.get(name))!.metadata.uid;
    const list = await t.kc.makeApiClient(k8s.EventsV1Api).listNamespacedEvent({ namespace: t.namespace });
    const reasons = list.items.filter((e) => e.regarding?.uid === uid).map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['AwaitingApproval', 'Approved', 'StepFailed', 'Progressing']));
  });

  it('given a deletion under an approval rule, it waits with the record still there, refuses a caller with reconcile but not approve (403), and an approver’s approve drops it; history, Event and wait cost name and bound it', async () => {
    const name = `del-${randomSuffix()}`;
    await ledgers.create(name, 3);
    await waitPhase(name, 'Ready');
    expect(await external(name)).toBe(3);
    await ledgers.delete(name);
    await waitPhase(name, 'AwaitingApproval');
    const waiting = await ledgers.get(name);
    const approved = waiting?.status?.conditions?.find((c) => c.type === 'Approved');
    expect(approved).toMatchObject({ status: 'False', reason: 'AwaitingApproval' });
    expect(approved?.message).toContain('step drop');
    expect(approved?.message).toContain('always needs approval');
    expect(approved?.message).toContain(`drop record ${name}`);
    const handle = t.temporal.workflow.getHandle(workflowIdFor(ref(name)));
    // Waiting: the workflow idles on its timer (nothing more recorded), the record is untouched.
    await waitFor(async () => (await state(name)).awaitingApproval?.step === 'drop', 30_000);
    expect(await external(name)).toBe(3);
    // The run that waits: once the object is gone, a late event may start a new run under the same ID
    // (it finds nothing and ends), so the history is read from this run, not the workflow's latest.
    const waitingRun = (await handle.describe()).runId;

    expect(await decide(name, 'approve', tokens.operator)).toMatchObject({
      status: 403,
      json: { code: 'ERR_FORBIDDEN' },
    });
    expect(await decide(name, 'reject', tokens.outsider)).toMatchObject({ status: 403 });
    expect(await external(name)).toBe(3);

    const answer = await decide(name, 'approve', tokens.approver, { comment: 'retired, backed up' });
    const approver = `system:serviceaccount:${t.namespace}:approver`;
    expect(answer).toMatchObject({ status: 200, json: { step: 'drop', decision: 'approve', approver } });
    await waitFor(async () => (await ledgers.get(name)) === undefined, 60_000, 200, 'the ledger gone');
    expect(await external(name)).toBeUndefined();

    // History: the accepted update carries the approver and the comment.
    const events = (await t.temporal.workflow.getHandle(handle.workflowId, waitingRun).fetchHistory()).events ?? [];
    const accepted = events.find((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED);
    const payload =
      accepted?.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.args?.payloads?.[0];
    const decided = JSON.parse(Buffer.from(payload!.data!).toString('utf8')) as Record<string, unknown>;
    expect(decided).toMatchObject({ decision: 'approve', approver, comment: 'retired, backed up' });
    // The wait's cost: from the approval check's completion to the decision, at most 2 actions (the
    // phase's search attribute and the timeout's timer), however long it waits.
    const decidedAt = events.indexOf(accepted!);
    const check = events
      .slice(0, decidedAt)
      .findLast((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'checkApproval');
    const checked = events.findIndex(
      (e) => e.activityTaskCompletedEventAttributes?.scheduledEventId?.toString() === check?.eventId?.toString(),
    );
    expect(checked).toBeGreaterThan(0);
    const wait = historyCost(events.slice(checked + 1, decidedAt));
    expect(wait.actions).toBeLessThanOrEqual(2);
    expect(wait.byType).toMatchObject({ TIMER_STARTED: 1, UPSERT_WORKFLOW_SEARCH_ATTRIBUTES: 1 });
    // Nothing acts on the decision in the workflow task that received it: that task only starts the
    // timer that ends it, so the decision is in history before the status write, the step and the
    // finalizer's removal (a task that also ended the run could fail on the object's own watch
    // events, dropping the accepted decision after the step had run).
    const nextTask = events.findIndex(
      (e, i) => i > decidedAt && e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
    );
    expect(nextTask).toBeGreaterThan(decidedAt);
    const received = events.slice(decidedAt, nextTask).map((e) => EventType[e.eventType!]);
    expect(received).toEqual(
      expect.arrayContaining(['EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED', 'EVENT_TYPE_TIMER_STARTED']),
    );
    for (const acting of ['MARKER_RECORDED', 'ACTIVITY_TASK_SCHEDULED', 'WORKFLOW_EXECUTION_COMPLETED'])
      expect(received).not.toContain(`EVENT_TYPE_${acting}`);

    // An Event names the approver.
    const uid = waiting!.metadata.uid;
    const list = await t.kc.makeApiClient(k8s.EventsV1Api).listNamespacedEvent({ namespace: t.namespace });
    const mine = list.items.filter((e) => e.regarding?.uid === uid);
    expect(mine.map((e) => e.reason)).toEqual(expect.arrayContaining(['AwaitingApproval', 'Approved']));
    expect(mine.find((e) => e.reason === 'Approved')?.note).toContain(`approved by ${approver}: retired, backed up`);
  });

  it('given a spec change while a step waits, it voids the wait and waits for the new generation; a stale approval (previous generation) is a 409, and the approval of the new one runs it and stays in status', async () => {
    const name = `void-${randomSuffix()}`;
    await ledgers.create(name, 5);
    await waitPhase(name, 'Ready');
    await ledgers.resize(name, 2);
    await waitFor(async () => (await state(name)).awaitingApproval?.generation === 2, 60_000);
    expect(await phaseOf(name)).toBe('AwaitingApproval');
    await ledgers.resize(name, 3);
    await waitFor(
      async () => (await state(name)).awaitingApproval?.generation === 3,
      60_000,
      200,
      'the wait for generation 3',
    );
    // Voided by the spec change (the pass gave way), not ended by the step's 20-second timeout.
    expect((await state(name)).lastOutcome?.result).toBe('superseded');
    expect(await external(name)).toBe(5);
    expect(await decide(name, 'approve', tokens.approver, { generation: 2 })).toMatchObject({
      status: 409,
      json: { code: 'ERR_CONFLICT' },
    });
    expect(await external(name)).toBe(5);
    expect(await decide(name, 'approve', tokens.approver, { generation: 3, comment: 'ok' })).toMatchObject({
      status: 200,
    });
    await waitPhase(name, 'Ready');
    expect(await external(name)).toBe(3);
    const cond = (await ledgers.get(name))?.status?.conditions?.find((c) => c.type === 'Approved');
    expect(cond).toMatchObject({ status: 'True', reason: 'Approved' });
    expect(cond?.message).toContain(`approved by system:serviceaccount:${t.namespace}:approver: ok`);
  });

  it('given a reject, a timeout, an object not waiting and hostile requests, the record stays as it was and each answer is a documented 4xx', async () => {
    const name = `rej-${randomSuffix()}`;
    await ledgers.create(name, 4);
    await waitPhase(name, 'Ready');
    expect(await decide(name, 'approve', tokens.approver)).toMatchObject({
      status: 409,
      json: { code: 'ERR_CONFLICT' },
    });
    await ledgers.resize(name, 1);
    await waitFor(async () => (await state(name)).awaitingApproval !== undefined, 60_000);
    expect(await decide(name, 'approve', tokens.approver, { comment: 'x'.repeat(1025) })).toMatchObject({
      status: 400,
    });
    expect(await decide(name, 'approve', tokens.approver, { comment: 'ok', force: true })).toMatchObject({
      status: 400,
    });
    expect(await decide(name, 'reject', tokens.approver, { comment: 'not now' })).toMatchObject({ status: 200 });
    await waitPhase(name, 'Degraded');
    expect(await external(name)).toBe(4);
    const cond = (await ledgers.get(name))?.status?.conditions?.find((c) => c.type === 'Approved');
    expect(cond).toMatchObject({ status: 'False', reason: 'Rejected' });
    expect(cond?.message).toContain('rejected by');
    expect(await decide(name, 'approve', tokens.approver)).toMatchObject({ status: 409 });

    // The timeout (20 s for this step): Degraded, nothing done.
    const late = `late-${randomSuffix()}`;
    await ledgers.create(late, 6);
    await waitPhase(late, 'Ready');
    await ledgers.resize(late, 2);
    await waitPhase(late, 'AwaitingApproval');
    await waitPhase(late, 'Degraded', 120_000);
    expect(await external(late)).toBe(6);
    const timedOut = (await ledgers.get(late))?.status?.conditions?.find((c) => c.type === 'Approved');
    expect(timedOut).toMatchObject({ status: 'False', reason: 'ApprovalTimedOut' });
  });

  it('given a step waiting for approval, homeostat pending lists it with its step and reason, and homeostat approve lets it run', async () => {
    const name = `cli-${randomSuffix()}`;
    await ledgers.create(name, 9);
    await waitPhase(name, 'Ready');
    await ledgers.resize(name, 8);
    await waitFor(async () => (await state(name)).awaitingApproval !== undefined, 60_000);
    // Visibility lags the workflow by a moment: wait until the list shows it.
    let last = { status: null as number | null, stdout: '', stderr: '' };
    const pending = await waitFor(
      async () => {
        last = await cli('pending', '-n', t.namespace);
        return last.status === 0 && last.stdout.includes(name) ? last.stdout : undefined;
      },
      60_000,
      1000,
      () => `homeostat pending to list it (last: ${JSON.stringify(last).slice(0, 1500)})`,
    );
    expect(pending).toMatch(new RegExp(`Ledger.*${name}.*record.*shrinking a record loses entries`));
    const approved = await cli('approve', 'Ledger', `${t.namespace}/${name}`, '--comment', 'from the cli');
    expect({ status: approved.status, stderr: approved.stderr }).toEqual({ status: 0, stderr: '' });
    expect(approved.stdout).toContain(`approved by system:serviceaccount:${t.namespace}:approver`);
    await waitPhase(name, 'Ready');
    expect(await external(name)).toBe(8);
  });
});
