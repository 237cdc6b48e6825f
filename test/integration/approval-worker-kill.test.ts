/**
 * A pending approval survives its worker (issue 28): the only worker, a child process, is SIGKILLed
 * while a step waits for approval; a new worker process replays the run, the wait is still there (same
 * step, generation and preview), nothing ran meanwhile, and the approval sent then lets the step run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { temporal } from '@temporalio/proto';
import pino from 'pino';
import { Bridge } from '../../informer-bridge';
import { watchedResourcesFor } from '../../informer-bridge/operator-resources';
import { decideApprovalUpdate, stateQuery, workflowIdFor } from '../../core/definitions';
import { bundleObjectWorkflows } from '../../workers/create-worker';
import { waitFor } from '../support/bridge';
import { randomSuffix, useStack } from '../support/harness';
import { installOperatorCrds } from '../support/homeostat';
import {
  ledgerGroup as group,
  ledgerOperator,
  ledgerRecord,
  ledgerVersion as version,
} from '../fixtures/ledger/operator';

const EventType = temporal.api.enums.v1.EventType;

describe('a pending approval across a worker SIGKILL', () => {
  const t = useStack();
  const taskQueue = `approval-kill-${randomSuffix()}`;
  const children: ChildProcess[] = [];
  let bundlePath = '';
  let bridge: Bridge | undefined;

  afterAll(async () => {
    await bridge?.stop();
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  beforeAll(async () => {
    const operator = ledgerOperator(() => t.core, 'ledgers', '1 hour');
    await installOperatorCrds(t, operator);
    bundlePath = join(mkdtempSync(join(tmpdir(), 'homeostat-bundle-')), 'workflow-bundle.js');
    writeFileSync(bundlePath, (await bundleObjectWorkflows()).code);
    bridge = new Bridge({
      kc: t.kc,
      resources: await watchedResourcesFor(operator, t.kc),
      operator,
      namespace: t.namespace,
      client: t.temporal,
      taskQueue,
      log: pino({ level: 'warn' }),
      leaderElection: false,
    });
    bridge.start();
  }, 120_000);

  async function startWorker(): Promise<ChildProcess> {
    const options = {
      temporalAddress: t.endpoints.temporalAddress,
      namespace: t.endpoints.temporalNamespace,
      taskQueue,
      kubeconfig: t.endpoints.kubeconfig,
      workflowBundlePath: bundlePath,
      // Far longer than a worker's restart on a loaded machine: the wait must outlive the kill.
      shrinkApprovalTimeout: '1 hour',
    };
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(__dirname, '../fixtures/ledger-worker-main.ts'), JSON.stringify(options)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    children.push(child);
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('READY')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`worker exited early with ${code}`)));
    });
    return child;
  }

  it('given the only worker SIGKILLed while a step waits for approval, a new worker finds the wait intact and the approval then runs the step once', async () => {
    const name = `kill-${randomSuffix()}`;
    const plural = 'ledgers';
    const ref = { group, version, kind: 'Ledger', namespace: t.namespace, name };
    const handle = t.temporal.workflow.getHandle(workflowIdFor(ref));
    const phase = async () =>
      (
        (await t.custom.getNamespacedCustomObject({ group, version, namespace: t.namespace, plural, name })) as {
          status?: { phase?: string };
        }
      ).status?.phase;
    const first = await startWorker();
    await t.custom.createNamespacedCustomObject({
      group,
      version,
      namespace: t.namespace,
      plural,
      body: { apiVersion: `${group}/${version}`, kind: 'Ledger', metadata: { name }, spec: { size: 7 } },
    });
    await waitFor(async () => (await phase()) === 'Ready', 90_000, 200, 'Ready');
    await t.custom.patchNamespacedCustomObject(
      { group, version, namespace: t.namespace, plural, name, body: { spec: { size: 4 } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    const before = await waitFor(async () => (await handle.query(stateQuery)).awaitingApproval, 60_000);
    first.kill('SIGKILL');
    await new Promise((r) =>
      first.exitCode !== null || first.signalCode !== null ? r(undefined) : first.once('exit', r),
    );
    expect(first.signalCode).toBe('SIGKILL');

    await startWorker();
    // The new worker replays the run: the same wait, nothing done.
    const after = (await handle.query(stateQuery)).awaitingApproval;
    expect(after).toEqual(before);
    expect(await phase()).toBe('AwaitingApproval');
    expect(await ledgerRecord(t.core, t.namespace, name)).toBe(7);

    await handle.executeUpdate(decideApprovalUpdate, {
      args: [
        {
          ref,
          decision: 'approve',
          approver: 'kill-test',
          generation: before.generation,
          previewHash: before.previewHash,
        },
      ],
    });
    await waitFor(async () => (await phase()) === 'Ready', 60_000, 200, 'Ready after approval');
    expect(await ledgerRecord(t.core, t.namespace, name)).toBe(4);
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED)).toEqual([]);
    const steps = events.filter(
      (e) =>
        e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
        e.activityTaskScheduledEventAttributes?.activityType?.name?.endsWith('/record'),
    );
    expect(steps.length).toBe(2); // once at creation, once after the approval
  });
});
