/**
 * The per-object workflow against the real Temporal dev server, kube-apiserver and PostgreSQL, with
 * the test reconcilers of `test/fixtures/counter` (prepare → publish, audit independent), whose step
 * runs and effects are counted in PostgreSQL. Set RECORD_HISTORIES=1 to record test/histories/<version>/.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { NativeConnection, type Worker } from '@temporalio/worker';
import { Pool } from 'pg';
import pino from 'pino';
import { bundleObjectWorkflows, createHomeostatWorker, installRuntime } from '../../workers/create-worker';
import { reconcileNowUpdate, type ObjectState } from '../../core/definitions';
import { counterReconcilers, createCounterTables } from '../fixtures/counter/reconciler';
import {
  Counters,
  historyCost,
  installCounterCrds,
  runsOf,
  stepEffects,
  stepRuns,
  waitFor,
} from '../support/counter-harness';
import { randomSuffix, useStack } from '../support/harness';
import { recordHistory } from '../support/histories';

const workflowsPath = require.resolve('../fixtures/counter-workflows');

describe('objectWorkflow: the durable per-object reconcile workflow', () => {
  const t = useStack();
  const taskQueue = `objects-${randomSuffix()}`;
  let pool: Pool;
  let connection: NativeConnection;
  let worker: Worker;
  let running: Promise<void>;
  let counters: Counters;

  beforeAll(async () => {
    pool = new Pool({ connectionString: t.endpoints.postgresUrl, max: 8 });
    await createCounterTables(pool);
    await installCounterCrds(t);
    const logger = pino({ name: 'test-worker', level: 'warn' });
    installRuntime(logger);
    connection = await NativeConnection.connect({ address: t.endpoints.temporalAddress });
    worker = await createHomeostatWorker({
      connection,
      namespace: t.endpoints.temporalNamespace,
      taskQueue,
      workflowBundle: await bundleObjectWorkflows(workflowsPath),
      operator: { name: 'counter', reconcilers: counterReconcilers(pool) },
      kc: t.kc,
      logger,
    });
    running = worker.run();
    counters = new Counters(t, taskQueue);
  }, 120_000);

  afterAll(async () => {
    worker?.shutdown();
    await running;
    await connection?.close();
    await pool?.end();
  });

  const recordObjectHistory = (name: string, objName: string, c: Counters = counters): Promise<void> =>
    recordHistory(name, () => c.handle(objName).fetchHistory());

  it('given a new object, it becomes Ready with correct conditions and observedGeneration, the independent step running in parallel with the first', async () => {
    const name = t.unique('create');
    const obj = await counters.create(name, { message: 'hello pony', stepDelayMs: 700 });
    await counters.request(obj, 'added');
    const ready = await counters.waitForPhase(name, 'Ready', 1);
    const uid = obj.metadata.uid!;

    expect(ready.metadata.finalizers).toContain('homeostat.dev/finalizer');
    const byType = Object.fromEntries((ready.status?.conditions ?? []).map((c) => [c.type, c]));
    expect(byType.Ready).toMatchObject({ status: 'True', reason: 'Reconciled', observedGeneration: 1 });
    expect(byType.Progressing).toMatchObject({ status: 'False', observedGeneration: 1 });
    expect(byType.Degraded).toMatchObject({ status: 'False', observedGeneration: 1 });
    expect(byType.Ready?.lastTransitionTime).toEqual(expect.any(String));

    const runs = await stepRuns(pool, uid);
    const prepare = runs.find((r) => r.step === 'prepare')!;
    const audit = runs.find((r) => r.step === 'audit')!;
    const publish = runs.find((r) => r.step === 'publish')!;
    expect(runs.map((r) => r.step).sort()).toEqual(['audit', 'prepare', 'publish']);
    // audit overlaps prepare (each takes 700 ms); publish starts only after prepare finished.
    expect(audit.started).toBeLessThan(prepare.finished!);
    expect(prepare.started).toBeLessThan(audit.finished!);
    expect(publish.started).toBeGreaterThanOrEqual(prepare.finished!);

    // The child was applied by server-side apply, owned by the object.
    const cm = await t.core.readNamespacedConfigMap({ name: `${name}-config`, namespace: t.namespace });
    expect(cm.data).toEqual({ message: 'hello pony' });
    expect(cm.metadata?.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'Counter', name, uid, controller: true, blockOwnerDeletion: true }),
    ]);
    expect(cm.metadata?.managedFields?.some((f) => f.manager === 'homeostat' && f.operation === 'Apply')).toBe(true);

    // An Event records the outcome.
    const events = await waitFor(async () => {
      const list = await t.kc.makeApiClient(k8s.EventsV1Api).listNamespacedEvent({ namespace: t.namespace });
      const mine = list.items.filter((e) => e.regarding?.uid === uid);
      return mine.length > 0 ? mine : undefined;
    });
    expect(events.map((e) => e.reason)).toContain('Reconciled');

    // Spec change → exactly one new pass, with one effect per step for generation 2.
    const before = await counters.state(name);
    const changed = await counters.patchSpec(name, { message: 'hello again' });
    await counters.request(changed, 'updated');
    await counters.waitForPhase(name, 'Ready', 2);
    const after = await waitFor(async () => {
      const s = await counters.state(name);
      return s.passes > before.passes && !s.reconciling ? s : undefined;
    });
    expect(after.passes).toBe(before.passes + 1);
    expect(await stepEffects(pool, uid)).toEqual({
      'prepare@1': 1,
      'publish@1': 1,
      'audit@1': 1,
      'prepare@2': 1,
      'publish@2': 1,
      'audit@2': 1,
    });
    await recordObjectHistory('create-ready-update', name);
  });

  it('given an invalid spec, phase is Invalid with the validation message, nothing runs until the spec is fixed, and fixing it reconciles', async () => {
    const name = t.unique('invalid');
    const obj = await counters.create(name, { message: 'hello pony!' });
    const handle = await counters.request(obj, 'added');
    const invalid = await counters.waitForPhase(name, 'Invalid', 1);
    const ready = invalid.status?.conditions?.find((c) => c.type === 'Ready');
    expect(ready).toMatchObject({ status: 'False', reason: 'InvalidSpec', observedGeneration: 1 });
    expect(ready?.message).toContain('spec.message: message must not shout (no "!")');
    const state = await counters.settled(name);
    expect(state).toMatchObject({ phase: 'Invalid', lastOutcome: { result: 'invalid' } });

    // More requests for the same generation: no pass, no activity.
    const scheduled = async () =>
      (await handle.fetchHistory()).events!.filter((e) => e.activityTaskScheduledEventAttributes).length;
    const before = await scheduled();
    for (let i = 0; i < 3; i++) await counters.request(obj, 'resync');
    // The workflow has seen the three signals (a workflow task completed after the last one, or this
    // throws after 30 s): only then does "no activity was scheduled" say anything.
    await waitFor(async () => {
      const events = (await handle.fetchHistory()).events!;
      const lastSignal = events.findLastIndex((e) => e.workflowExecutionSignaledEventAttributes);
      return events.slice(lastSignal + 1).some((e) => e.workflowTaskCompletedEventAttributes) || undefined;
    });
    expect(await scheduled()).toBe(before);
    expect((await counters.state(name)).passes).toBe(state.passes);
    expect(await stepRuns(pool, obj.metadata.uid!)).toEqual([]);

    const fixed = await counters.patchSpec(name, { message: 'hello pony' });
    await counters.request(fixed, 'updated');
    const done = await counters.waitForPhase(name, 'Ready', 2);
    expect(done.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True' });
    expect(Object.keys(await stepEffects(pool, obj.metadata.uid!)).sort()).toEqual([
      'audit@2',
      'prepare@2',
      'publish@2',
    ]);
    await recordObjectHistory('invalid-then-fixed', name);
  });

  it('given a step that fails three times, it is retried with growing delays, Degraded while failing, then Ready', async () => {
    const name = t.unique('flaky');
    const obj = await counters.create(name, { message: 'flaky pony', failTimes: 3 });
    await counters.request(obj, 'added');
    const degraded = await counters.waitForPhase(name, 'Degraded', 1);
    expect(degraded.status?.conditions?.find((c) => c.type === 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'StepFailed',
    });
    expect(degraded.status?.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({
      status: 'True',
      reason: 'Retrying',
    });
    await counters.waitForPhase(name, 'Ready', 1);
    const runs = (await stepRuns(pool, obj.metadata.uid!)).filter((r) => r.step === 'publish');
    expect(runs.map((r) => r.outcome)).toEqual([
      'publish failure 1 of 3',
      'publish failure 2 of 3',
      'publish failure 3 of 3',
      'ok',
    ]);
    // The workflow waited 400 ms, 800 ms, 1600 ms between rounds (durable timers in history) …
    const history = await counters.handle(name).fetchHistory();
    const retryTimers = history
      .events!.filter((e) => e.timerStartedEventAttributes)
      .map((e) => {
        const d = e.timerStartedEventAttributes!.startToFireTimeout!;
        return Number(d.seconds ?? 0) * 1000 + Math.round((d.nanos ?? 0) / 1e6);
      });
    expect(retryTimers).toEqual([400, 800, 1600]);
    // … and the attempts really were further and further apart.
    const gaps = runs.slice(1).map((r, i) => r.started - runs[i]!.finished!);
    expect(gaps[0]).toBeGreaterThanOrEqual(400);
    expect(gaps[1]).toBeGreaterThanOrEqual(800);
    expect(gaps[2]).toBeGreaterThanOrEqual(1600);
    expect(gaps[2]).toBeGreaterThan(gaps[1]!);
    const state = await counters.state(name);
    expect(state.steps.publish).toMatchObject({ status: 'succeeded', attempts: 4 });
    expect(await stepEffects(pool, obj.metadata.uid!)).toEqual({ 'prepare@1': 1, 'publish@1': 1, 'audit@1': 1 });
    await recordObjectHistory('flaky-step', name);
  });

  it('given a throttled step with Retry-After, the next attempt waits exactly that long (nextRetryDelay), not the backoff', async () => {
    const name = t.unique('throttled');
    const obj = await counters.create(name, { message: 'polite pony', throttleMs: 1500 });
    await counters.request(obj, 'added');
    await counters.waitForPhase(name, 'Ready', 1);
    const history = await counters.handle(name).fetchHistory();
    const timers = history
      .events!.filter((e) => e.timerStartedEventAttributes)
      .map((e) => {
        const d = e.timerStartedEventAttributes!.startToFireTimeout!;
        return Number(d.seconds ?? 0) * 1000 + Math.round((d.nanos ?? 0) / 1e6);
      });
    expect(timers).toEqual([1500]); // the plan's backoff would have been 400 ms
    const runs = (await stepRuns(pool, obj.metadata.uid!)).filter((r) => r.step === 'publish');
    expect(runs.map((r) => r.outcome)).toEqual(['publish: HTTP 429 too many requests', 'ok']);
    expect(runs[1]!.started - runs[0]!.finished!).toBeGreaterThanOrEqual(1500);
  });

  it('given a step that throws a terminal error, it is not retried and the object is Degraded until the spec changes', async () => {
    const name = t.unique('terminal');
    const obj = await counters.create(name, { message: 'stubborn pony', terminal: true });
    await counters.request(obj, 'added');
    const degraded = await counters.waitForPhase(name, 'Degraded', 1);
    expect(degraded.status?.conditions?.find((c) => c.type === 'Degraded')).toMatchObject({
      status: 'True',
      reason: 'TerminalStepError',
      message: 'publish: publishing is forbidden by the spec',
    });
    await counters.request(obj, 'resync');
    await new Promise((r) => setTimeout(r, 2500));
    const runs = (await stepRuns(pool, obj.metadata.uid!)).filter((r) => r.step === 'publish');
    expect(runs).toHaveLength(1);
    expect((await counters.state(name)).steps.publish).toMatchObject({ status: 'failed', attempts: 1 });
    const fixed = await counters.patchSpec(name, { terminal: false });
    await counters.request(fixed, 'updated');
    await counters.waitForPhase(name, 'Ready', 2);
  });

  it('given a step that refuses to adopt something, it reports AdoptionRefused without retrying, changes nothing, and clears at the next drift check once the conflict is gone', async () => {
    const drifting = new Counters(t, taskQueue, 'DriftCounter');
    const name = t.unique('refused');
    const conflict = `row-${name}`;
    await pool.query('INSERT INTO counter_conflicts (name) VALUES ($1)', [conflict]);
    const obj = await drifting.create(name, { message: 'careful pony', refuseWhile: conflict });
    await drifting.request(obj, 'added');
    const refused = await drifting.waitForPhase(name, 'Degraded', 1);
    expect(refused.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'AdoptionRefused',
      message: `publish: conflict ${conflict}: it exists and this object did not create it`,
    });
    expect(refused.status?.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({
      status: 'False',
      reason: 'AdoptionRefused',
    });
    // No retry storm: each drift check (every 2 s) makes one attempt, not a backoff round of three.
    const checked = await waitFor(async () => {
      const st = await drifting.state(name);
      return st.passes >= 3 && !st.reconciling ? st : undefined;
    }, 20_000);
    expect(checked.nextTimer?.kind).toBe('drift');
    const runs = (await stepRuns(pool, obj.metadata.uid!)).filter((r) => r.step === 'publish');
    expect(runs.length).toBeLessThanOrEqual(checked.passes + 1);
    expect((await stepEffects(pool, obj.metadata.uid!))['publish@1']).toBeUndefined();
    // The conflict goes: no event is sent, the next drift check finds the way clear.
    await pool.query('DELETE FROM counter_conflicts WHERE name = $1', [conflict]);
    const ready = await drifting.waitForPhase(name, 'Ready', 1);
    expect(ready.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True' });
  });

  it('given a step still progressing, the steps that depend on it wait (the pass ends Reconciling, their conditions say why) and run once it is done', async () => {
    for (const kind of ['Counter', 'ChainCounter'] as const) {
      const c = new Counters(t, taskQueue, kind);
      const name = t.unique(`held-${kind.toLowerCase()}`);
      const gate = `gate-${name}`;
      await pool.query('INSERT INTO counter_conflicts (name) VALUES ($1)', [gate]);
      const obj = await c.create(name, { message: 'patient pony', holdWhile: gate });
      await c.request(obj, 'added');
      const held = await c.waitForPhase(name, 'Reconciling', 1);
      const condition = (type: string) => held.status?.conditions?.find((x) => x.type === type);
      expect(condition('PrepareReady')).toMatchObject({
        status: 'False',
        reason: 'InProgress',
        message: `waiting for ${gate}`,
      });
      expect(condition('PublishReady')).toMatchObject({
        status: 'False',
        reason: 'WaitingForDependency',
        message: `waits for prepare to finish: waiting for ${gate}`,
      });
      const ran = (await stepRuns(pool, obj.metadata.uid!)).map((r) => r.step);
      expect(ran).not.toContain('publish');
      // ChainCounter's audit depends on publish; Counter's does not, so it ran.
      if (kind === 'ChainCounter') expect(ran).not.toContain('audit');
      else expect(ran).toContain('audit');
      // The work finishes (a child's status change would signal it): the next pass runs the rest.
      await pool.query('DELETE FROM counter_conflicts WHERE name = $1', [gate]);
      await c.request(obj, 'child-changed');
      const ready = await c.waitForPhase(name, 'Ready', 1);
      expect(ready.status?.conditions?.find((x) => x.type === 'PublishReady')).toMatchObject({ status: 'True' });
      expect((await stepEffects(pool, obj.metadata.uid!))['publish@1']).toBe(1);
      await recordObjectHistory(`held-dependents-${kind.toLowerCase()}`, name, c);
    }
  });

  it('given a step that calls out once per generation, a later pass of the same generation sees its previous success and does not call again; a new generation does', async () => {
    for (const kind of ['Counter', 'ChainCounter'] as const) {
      const c = new Counters(t, taskQueue, kind);
      const name = t.unique(`once-${kind.toLowerCase()}`);
      let obj = await c.create(name, { message: 'thrifty pony', oncePerGeneration: true });
      await c.request(obj, 'added');
      await c.settled(name, 1);
      await c.request(obj, 'resync');
      const second = await c.settled(name, 2);
      expect(second.steps.publish?.message).toBe('already published at generation 1');
      obj = await c.patchSpec(name, { message: 'thriftier pony' });
      await c.request(obj, 'updated');
      const third = await c.settled(name, 3);
      expect(third.steps.publish?.message).toBe('published thriftier pony');
      // publish ran three times; the second answered from its previous success without its call.
      const published = (await stepRuns(pool, obj.metadata.uid!)).filter((r) => r.step === 'publish');
      expect(published.map((r) => r.generation)).toEqual([1, 1, 2]);
      await recordObjectHistory(`once-per-generation-${kind.toLowerCase()}`, name, c);
    }
  });

  it('given deletion, cleanup runs, the finalizer is removed, the object disappears and the workflow completes', async () => {
    const name = t.unique('doomed');
    const obj = await counters.create(name, { message: 'short-lived pony' });
    const handle = await counters.request(obj, 'added');
    await counters.waitForPhase(name, 'Ready', 1);
    await t.core.readNamespacedConfigMap({ name: `${name}-config`, namespace: t.namespace });

    await counters.delete(name);
    const deleting = await counters.get(name);
    expect(deleting?.metadata.deletionTimestamp).toBeDefined(); // held by the finalizer
    await counters.request(deleting!, 'deleted');
    await waitFor(async () => (await counters.get(name)) === undefined || undefined);
    const description = await waitFor(async () => {
      const d = await handle.describe();
      return d.status.name === 'COMPLETED' ? d : undefined;
    });
    expect(description.status.name).toBe('COMPLETED');
    expect(await handle.result()).toMatchObject({ result: 'deleted', steps: { teardown: { status: 'succeeded' } } });
    // Setting deletionTimestamp bumped the generation; cleanup ran once, for it.
    expect(await stepEffects(pool, obj.metadata.uid!)).toEqual({
      'prepare@1': 1,
      'publish@1': 1,
      'audit@1': 1,
      [`teardown@${deleting!.metadata.generation}`]: 1,
    });
    await expect(
      t.core.readNamespacedConfigMap({ name: `${name}-config`, namespace: t.namespace }),
    ).rejects.toMatchObject({
      code: 404,
    });
    await recordObjectHistory('deletion', name);
  });

  it('given the same name with a new UID after deletion, a new workflow run reconciles the new object', async () => {
    const name = t.unique('reborn');
    const first = await counters.create(name, { message: 'first pony' });
    const h1 = await counters.request(first, 'added');
    await counters.waitForPhase(name, 'Ready', 1);
    await counters.delete(name);
    await counters.request((await counters.get(name))!, 'deleted');
    await waitFor(async () => (await counters.get(name)) === undefined || undefined);
    const firstRun = (await h1.describe()).runId;

    const second = await counters.create(name, { message: 'second pony' });
    expect(second.metadata.uid).not.toBe(first.metadata.uid);
    await counters.request(second, 'added');
    await counters.waitForPhase(name, 'Ready', 1);
    const state = await counters.state(name);
    expect(state.uid).toBe(second.metadata.uid);
    expect((await counters.handle(name).describe()).runId).not.toBe(firstRun);
    expect(Object.keys(await stepEffects(pool, second.metadata.uid!)).sort()).toEqual([
      'audit@1',
      'prepare@1',
      'publish@1',
    ]);
  });

  it('given an object replaced behind its running workflow (finalizer stripped, deleted, recreated), the workflow starts over with the new UID', async () => {
    const name = t.unique('swapped');
    const first = await counters.create(name, { message: 'old pony' });
    const handle = await counters.request(first, 'added');
    await counters.waitForPhase(name, 'Ready', 1);
    const runId = (await handle.describe()).runId;
    await t.custom.patchNamespacedCustomObject(
      {
        group: 'test.homeostat.dev',
        version: 'v1',
        namespace: t.namespace,
        plural: 'counters',
        name,
        body: { metadata: { finalizers: null } },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await counters.delete(name);
    await waitFor(async () => (await counters.get(name)) === undefined || undefined);
    // The old object's ConfigMap goes: the garbage collector takes it on a stack running the whole
    // cluster (it may be gone already), and the test deletes it where no controller-manager runs. A new
    // object of the same name never adopts a child another UID controls.
    await t.core.deleteNamespacedConfigMap({ name: `${name}-config`, namespace: t.namespace }).catch((err: unknown) => {
      if ((err as { code?: number }).code !== 404) throw err;
    });
    const second = await counters.create(name, { message: 'new pony' });
    await counters.request(second, 'added');
    const ready = await waitFor(async () => {
      const obj = await counters.get(name);
      return obj?.status?.phase === 'Ready' ? obj : undefined;
    });
    expect(ready.metadata.uid).toBe(second.metadata.uid);
    expect(ready.metadata.finalizers).toContain('homeostat.dev/finalizer');
    const state = await counters.settled(name, 2);
    expect(state.uid).toBe(second.metadata.uid);
    expect((await handle.describe()).runId).toBe(runId); // same run, state reset for the new object
    expect(Object.keys(await stepEffects(pool, second.metadata.uid!)).sort()).toEqual([
      'audit@1',
      'prepare@1',
      'publish@1',
    ]);
  });

  it('given reconcileNow, it runs a pass and returns its outcome, which state reports; it rejects another object', async () => {
    const name = t.unique('now');
    const obj = await counters.create(name, { message: 'eager pony' });
    const handle = await counters.request(obj, 'added');
    await counters.waitForPhase(name, 'Ready', 1);
    const ref = counters.ref(name);
    const outcome = await handle.executeUpdate(reconcileNowUpdate, { args: [{ ref, uid: obj.metadata.uid! }] });
    expect(outcome).toMatchObject({ result: 'ready', phase: 'Ready', generation: 1, uid: obj.metadata.uid });
    const state: ObjectState = await counters.state(name);
    expect(state.lastOutcome).toEqual(outcome);
    expect(state.passes).toBe(outcome.pass);
    expect(state).toMatchObject({ phase: 'Ready', observedGeneration: 1, reconciling: false });
    expect(state.steps.publish).toMatchObject({ status: 'succeeded', attempts: 1 });

    await expect(
      handle.executeUpdate(reconcileNowUpdate, { args: [{ ref, uid: 'not-this-one' }] }),
    ).rejects.toMatchObject({
      name: 'WorkflowUpdateFailedError',
      cause: { message: expect.stringMatching(/unknown object: UID not-this-one/) },
    });
    await expect(
      handle.executeUpdate(reconcileNowUpdate, { args: [{ ref: { ...ref, name: 'someone-else' } }] }),
    ).rejects.toMatchObject({ cause: { message: expect.stringMatching(/not the requested object/) } });
    // A rejected update leaves no trace in history.
    const history = await handle.fetchHistory();
    expect(history.events!.filter((e) => e.workflowExecutionUpdateAcceptedEventAttributes)).toHaveLength(1);
    await recordObjectHistory('reconcile-now', name);
  });

  it('given requeue-after and a drift interval, durable timers re-run the pass without any event', async () => {
    const requeued = t.unique('requeue');
    const obj = await counters.create(requeued, { message: 'patient pony', requeueAfterMs: 1000 });
    await counters.request(obj, 'added');
    await counters.waitForPhase(requeued, 'Ready', 1);
    const s = await waitFor(async () => {
      const st = await counters.state(requeued);
      return st.passes >= 3 ? st : undefined;
    }, 15_000);
    expect(s.nextTimer?.kind).toBe('requeue');

    const drifting = new Counters(t, taskQueue, 'DriftCounter');
    const dname = t.unique('drift');
    const dobj = await drifting.create(dname, { message: 'drifting pony' });
    await drifting.request(dobj, 'added');
    await drifting.waitForPhase(dname, 'Ready', 1);
    // Someone edits the owned ConfigMap behind homeostat's back; the drift check puts it back.
    await t.core.patchNamespacedConfigMap(
      { name: `${dname}-config`, namespace: t.namespace, body: { data: { message: 'tampered' } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    await waitFor(async () => {
      const cm = await t.core.readNamespacedConfigMap({ name: `${dname}-config`, namespace: t.namespace });
      return cm.data?.message === 'drifting pony' || undefined;
    }, 10_000);
    const ds = await waitFor(async () => {
      const st = await drifting.state(dname);
      return st.passes >= 2 && !st.reconciling ? st : undefined;
    });
    expect(ds.passes).toBeGreaterThanOrEqual(2);
    expect(ds.lastOutcome?.generation).toBe(1); // no spec change: the timer alone triggered it
    expect(ds.nextTimer?.kind).toBe('drift');
    await recordObjectHistory('drift-timer', dname, drifting);
  });

  it('given a pass running, a burst of requests is coalesced into exactly one more pass with the newest generation', async () => {
    const name = t.unique('burst');
    const obj = await counters.create(name, { message: 'busy pony', stepDelayMs: 800 });
    await counters.request(obj, 'added');
    // Wait until the first pass has read generation 1 and runs its steps.
    await waitFor(async () => (await counters.state(name)).steps.prepare?.status === 'running' || undefined);
    let latest = obj;
    for (let i = 0; i < 5; i++) {
      latest = await counters.patchSpec(name, { message: `busy pony ${i}` });
      await counters.request(latest, 'updated');
    }
    expect(latest.metadata.generation).toBe(6);
    await counters.waitForPhase(name, 'Ready', 6);
    const state = await counters.state(name);
    expect(state.passes).toBe(2);
    expect(state.wantedGeneration).toBe(6);
    const generations = [...new Set((await stepRuns(pool, obj.metadata.uid!)).map((r) => r.generation))];
    expect(generations).toEqual([1, 6]);
  });

  it('given the Temporal UI, search attributes, static summary, current details and activity summaries describe the object', async () => {
    const name = t.unique('ui');
    const obj = await counters.create(name, { message: 'visible pony' });
    const handle = await counters.request(obj, 'added');
    await counters.waitForPhase(name, 'Ready', 1);
    await waitFor(async () => ((await counters.state(name)).reconciling ? undefined : true));
    const d = await handle.describe();
    expect(d.searchAttributes).toMatchObject({
      HomeostatKind: ['Counter'],
      HomeostatNamespace: [t.namespace],
      HomeostatName: [name],
      HomeostatPhase: ['Ready'],
      HomeostatGeneration: [1],
    });
    expect(await d.staticSummary()).toBe(`Reconciles Counter ${t.namespace}/${name} (test.homeostat.dev/v1)`);
    const meta = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    expect(meta.currentDetails).toContain(`**Counter ${t.namespace}/${name}** — phase **Ready**`);
    expect(meta.currentDetails).toContain('| publish | prepare | ✅ succeeded | 1 | published visible pony |');
    const history = await handle.fetchHistory();
    const scheduled = history.events!.filter((e) => e.activityTaskScheduledEventAttributes);
    expect(scheduled.length).toBeGreaterThan(0);
    expect(scheduled.every((e) => e.userMetadata?.summary?.data?.length)).toBe(true);
    // Search attributes are upserted only on change: one upsert (phase + generation) for this pass.
    // (The SDK also upserts TemporalChangeVersion once per run and patch — local-activities at the
    // run's start, status-step-conditions at its first Ready — counted apart.)
    const upserts = (events: typeof history.events) =>
      events!.filter(
        (e) => e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.HomeostatPhase,
      );
    const changeVersion = (events: typeof history.events) =>
      events!.filter(
        (e) => e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.TemporalChangeVersion,
      );
    expect(upserts(history.events)).toHaveLength(1);
    expect(changeVersion(history.events).length).toBeLessThanOrEqual(2);
    await handle.executeUpdate(reconcileNowUpdate, { args: [{ ref: counters.ref(name) }] });
    const again = await handle.fetchHistory();
    expect(upserts(again.events)).toHaveLength(1);
    expect(changeVersion(again.events).length).toBeLessThanOrEqual(2);
    expect(again.events!.filter((e) => e.upsertWorkflowSearchAttributesEventAttributes)).toHaveLength(
      1 + changeVersion(again.events).length,
    );
  });

  it('given local steps, a pass runs them as local activities: Ready within 4 actions, retried and terminal failures as before, and a drift check that finds nothing costs at most 2 actions', async () => {
    const local = new Counters(t, taskQueue, 'LocalCounter');
    const name = t.unique('local');
    const obj = await local.create(name, { message: 'nearby pony' });
    const handle = await local.request(obj, 'added');
    await local.waitForPhase(name, 'Ready', 1);
    await local.settled(name, 1);
    const effects = await stepEffects(pool, obj.metadata.uid!);
    for (const step of ['prepare', 'publish', 'audit']) expect(effects[`${step}@1`]).toBe(1);

    // No activity task went through the task queue: every step, observe and status are markers.
    const history = await handle.fetchHistory();
    const events = history.events ?? [];
    const byType = historyCost(history).byType;
    expect(byType.ACTIVITY_TASK_SCHEDULED).toBeUndefined();
    // observe, the three steps, the status write (no patch marker: see below)
    expect(byType.MARKER_RECORDED).toBeGreaterThanOrEqual(1 + 3 + 1);
    // Create → Ready and settled, everything up to the first (drift) timer, in one workflow task: the
    // start carrying the request + the task's markers + 1 upsert (homeostat's phase and generation; a
    // run that fuses leading steps calls no patch, so no TemporalChangeVersion upsert) + the timer = 4.
    const timerAt = events.findIndex((e) => e.timerStartedEventAttributes);
    const createCost = historyCost({ events: events.slice(0, timerAt + 1) });
    process.stdout.write(`local steps, create → Ready: ${JSON.stringify(createCost)}\n`);
    expect(createCost.byType.WORKFLOW_TASK_COMPLETED).toBe(1);
    expect(createCost.byType.UPSERT_WORKFLOW_SEARCH_ATTRIBUTES).toBe(1);
    expect(createCost.byType.WORKFLOW_EXECUTION_SIGNALED).toBeUndefined();
    expect(createCost.actions).toBeLessThanOrEqual(4);

    // Drift checks that find nothing: one timer and one workflow task of local activities each. Each
    // check is cut from the history itself, from one timer's firing to the next one's.
    const before = await local.settled(name, 2);
    await waitFor(async () => {
      const st = await local.state(name);
      return st.passes >= before.passes + 5 && !st.reconciling ? st : undefined;
    }, 30_000);
    const all = (await handle.fetchHistory()).events ?? [];
    const fired = all.flatMap((e, i) => (e.timerFiredEventAttributes ? [i] : []));
    const checks = fired.slice(1).map((end, k) => historyCost({ events: all.slice(fired[k], end) }));
    expect(checks.length).toBeGreaterThanOrEqual(4);
    const perCheck = Math.max(...checks.map((c) => c.actions));
    // Local activities that outlast most of the workflow task timeout make the SDK complete the task
    // and take another (a workflow-task heartbeat), whose markers count as one more action: that is the
    // machine's pace, not the workflow's design, so it is reported and taken out of the bound.
    const heartbeats = Math.max(...checks.map((c) => (c.byType.WORKFLOW_TASK_COMPLETED ?? 1) - 1));
    const perCheckByDesign = Math.max(...checks.map((c) => c.actions - ((c.byType.WORKFLOW_TASK_COMPLETED ?? 1) - 1)));
    process.stdout.write(
      `local steps, drift check: ${perCheck} actions at most (${checks.length} checks; workflow-task heartbeats at most ${heartbeats}): ${JSON.stringify(checks[0])}\n`,
    );
    expect(perCheckByDesign).toBeLessThanOrEqual(2);
    expect((await local.state(name)).lastOutcome?.statusWritten).toBe(false);

    // Retries still happen (publish fails twice, then succeeds), counted as attempts, its effect once.
    const flaky = t.unique('local-flaky');
    const fobj = await local.create(flaky, { message: 'flaky pony', failTimes: 2 });
    await local.request(fobj, 'added');
    await local.waitForPhase(flaky, 'Ready', 1);
    expect((await local.settled(flaky, 1)).steps.publish).toMatchObject({ status: 'succeeded', attempts: 3 });
    expect((await stepEffects(pool, fobj.metadata.uid!))['publish@1']).toBe(1);

    // A terminal failure in a local step blocks the generation, as for a regular step.
    const stubborn = t.unique('local-terminal');
    const sobj = await local.create(stubborn, { message: 'stubborn pony', terminal: true });
    await local.request(sobj, 'added');
    const degraded = await local.waitForPhase(stubborn, 'Degraded', 1);
    expect(degraded.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      reason: 'TerminalStepError',
    });
    await recordObjectHistory('local-steps', name, local);
  });

  it('given a chain of local steps, observe runs it and writes the pass’s status in its own local activity: one marker for the whole pass, retries and terminal failures as before', async () => {
    const chain = new Counters(t, taskQueue, 'ChainCounter');
    const name = t.unique('chain');
    const obj = await chain.create(name, { message: 'chained pony' });
    const handle = await chain.request(obj, 'added');
    await chain.waitForPhase(name, 'Ready', 1);
    const settled = await chain.settled(name, 1);
    expect(settled.steps).toMatchObject({
      prepare: { status: 'succeeded', attempts: 1, message: 'ConfigMap applied' },
      publish: { status: 'succeeded', attempts: 1, message: 'published chained pony' },
      audit: { status: 'succeeded', attempts: 1, message: 'audited' },
    });
    const effects = await stepEffects(pool, obj.metadata.uid!);
    for (const step of ['prepare', 'publish', 'audit']) expect(effects[`${step}@1`]).toBe(1);
    const ready = await chain.get(name);
    expect(ready?.status?.conditions?.find((c) => c.type === 'PublishReady')).toMatchObject({
      status: 'True',
      message: 'published chained pony',
    });

    // The create pass, up to the first drift timer: one marker, observe having run the three steps and
    // written the Ready status itself, where a marker per step and one for the status would make five.
    const events = (await handle.fetchHistory()).events ?? [];
    const timerAt = events.findIndex((e) => e.timerStartedEventAttributes);
    const createCost = historyCost({ events: events.slice(0, timerAt + 1) });
    process.stdout.write(`chained local steps, create → Ready: ${JSON.stringify(createCost)}\n`);
    expect(createCost.byType.MARKER_RECORDED).toBe(1);
    expect(createCost.byType.ACTIVITY_TASK_SCHEDULED).toBeUndefined();
    expect(createCost.actions).toBeLessThanOrEqual(4);
    // The Event of the phase change is recorded once, as a status write records it.
    const reasons = await waitFor(async () => {
      const list = await t.kc.makeApiClient(k8s.EventsV1Api).listNamespacedEvent({ namespace: t.namespace });
      const mine = list.items.filter((e) => e.regarding?.uid === obj.metadata.uid).map((e) => e.reason);
      return mine.length > 0 ? mine : undefined;
    });
    expect(reasons).toEqual(['Reconciled']);
    // Drift checks that find nothing write nothing: the status stays as observe wrote it.
    const checked = await chain.settled(name, 2);
    expect(checked.lastOutcome?.statusWritten).toBe(false);
    expect((await chain.get(name))?.metadata.resourceVersion).toBe(ready?.metadata.resourceVersion);

    // Observe's status write merges as the status activity does: another controller's condition stays.
    const shared = t.unique('chain-shared');
    const sh = await chain.create(shared, { message: 'shared pony' });
    const foreign = {
      type: 'example.com/Audited',
      status: 'True',
      reason: 'AuditPassed',
      message: 'written by another controller',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    };
    await t.custom.patchNamespacedCustomObjectStatus(
      {
        group: sh.apiVersion.split('/')[0]!,
        version: 'v1',
        namespace: t.namespace,
        plural: 'chaincounters',
        name: shared,
        body: { status: { conditions: [foreign] } },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    const sharedHandle = await chain.request(sh, 'added');
    const sharedReady = await chain.waitForPhase(shared, 'Ready', 1);
    expect(sharedReady.status?.conditions).toContainEqual(foreign);
    // A drift check that finds nothing beside another controller's condition does not even call the
    // status write: observe reports only homeostat's own conditions, so the workflow sees no change.
    await chain.settled(shared, 2);
    const sharedEvents = (await sharedHandle.fetchHistory()).events ?? [];
    const fired = sharedEvents.findIndex((e) => e.timerFiredEventAttributes);
    const rearmed = sharedEvents.findIndex((e, i) => i > fired && e.timerStartedEventAttributes);
    expect(fired).toBeGreaterThan(0);
    expect(rearmed).toBeGreaterThan(fired);
    expect(historyCost({ events: sharedEvents.slice(fired, rearmed + 1) }).byType.MARKER_RECORDED).toBe(1);

    // A leading step that fails is retried by the workflow as a step of its own: publish fails in
    // observe (attempt 1) and once more as its own local activity, then succeeds; audit, after it, runs
    // as its own activity too; the effect of publish happens once.
    const flaky = t.unique('chain-flaky');
    const fobj = await chain.create(flaky, { message: 'flaky pony', failTimes: 2 });
    await chain.request(fobj, 'added');
    await chain.waitForPhase(flaky, 'Ready', 1);
    expect((await chain.settled(flaky, 1)).steps).toMatchObject({
      prepare: { status: 'succeeded', attempts: 1 },
      publish: { status: 'succeeded', attempts: 3 },
      audit: { status: 'succeeded', attempts: 1 },
    });
    expect((await stepEffects(pool, fobj.metadata.uid!))['publish@1']).toBe(1);

    // A terminal failure in a leading step blocks the generation, with no second attempt.
    const stubborn = t.unique('chain-terminal');
    const sobj = await chain.create(stubborn, { message: 'stubborn pony', terminal: true });
    await chain.request(sobj, 'added');
    const degraded = await chain.waitForPhase(stubborn, 'Degraded', 1);
    expect(degraded.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      reason: 'TerminalStepError',
    });
    expect((await chain.settled(stubborn, 1)).steps).toMatchObject({
      publish: { status: 'failed', attempts: 1 },
      audit: { status: 'skipped' },
    });
    await recordObjectHistory('fused-leading-steps', name, chain);
  });

  it('given drift-check annotations, each object checks at its own interval within the plan bounds, jittered so objects created together spread out', async () => {
    const local = new Counters(t, taskQueue, 'LocalCounter');
    const asks: Record<string, string | undefined> = {
      slow: '10 minutes',
      huge: '9999 days', // clamped to the 24-hour maximum
      tiny: '1 ms', // clamped to the 30-second minimum
      junk: 'whenever', // ignored: the plan's 2 seconds
      none: undefined,
    };
    const names = Object.fromEntries(Object.keys(asks).map((k) => [k, t.unique(`interval-${k}`)]));
    for (const [k, ask] of Object.entries(asks)) {
      await local.create(names[k]!, { message: 'timely pony' });
      const obj =
        ask === undefined
          ? await local.get(names[k]!)
          : await local.annotate(names[k]!, { 'homeostat.dev/drift-check-interval': ask });
      await local.request(obj!, 'added');
    }
    const delayOf = async (k: string): Promise<number> => {
      const st = await local.settled(names[k]!, 1);
      return Date.parse(st.nextTimer!.at) - Date.now();
    };
    const within = (ms: number, target: number) => ms > target * 0.85 && ms <= target * 1.1 + 1000;
    expect(within(await delayOf('slow'), 600_000)).toBe(true);
    expect(within(await delayOf('huge'), 86_400_000)).toBe(true);
    expect(within(await delayOf('tiny'), 30_000)).toBe(true);
    expect(await delayOf('junk')).toBeLessThanOrEqual(2_200 + 1000);
    expect(await delayOf('none')).toBeLessThanOrEqual(2_200 + 1000);

    // Ten objects created together at the same 10-minute interval: their checks do not coincide.
    const many = Array.from({ length: 10 }, (_, i) => t.unique(`herd-${i}`));
    for (const n of many) {
      await local.create(n, { message: 'herd pony' });
      await local.request(await local.annotate(n, { 'homeostat.dev/drift-check-interval': '10m' }), 'added');
    }
    const at = await Promise.all(many.map(async (n) => Date.parse((await local.settled(n, 1)).nextTimer!.at)));
    const spread = Math.max(...at) - Math.min(...at);
    process.stdout.write(`drift jitter: 10 objects at 10 min spread over ${(spread / 1000).toFixed(1)} s\n`);
    expect(new Set(at.map((a) => Math.round(a / 1000))).size).toBeGreaterThanOrEqual(5);
    expect(spread).toBeGreaterThan(10_000);
  });

  it('given passes right after a create (requests within the drift window), they share the first pass’s drift timer: one timer, no remainder', async () => {
    const chain = new Counters(t, taskQueue, 'ChainCounter');
    const name = t.unique('shared-timer');
    await chain.create(name, { message: 'thrifty pony' });
    const obj = await chain.annotate(name, { 'homeostat.dev/drift-check-interval': '10 minutes' });
    const handle = await chain.request(obj, 'added');
    const first = await chain.settled(name, 1);
    // Twenty more passes: each draws its own jittered time; without the window, any draw earlier than
    // the running timer would start a second timer (and a remainder one later).
    for (let p = 2; p <= 21; p++) {
      await chain.request(obj, 'child-changed');
      await chain.settled(name, p);
    }
    const last = await chain.settled(name, 21);
    expect(last.nextTimer).toEqual(first.nextTimer);
    const events = (await handle.fetchHistory()).events ?? [];
    expect(events.filter((e) => e.timerStartedEventAttributes)).toHaveLength(1);
    await recordObjectHistory('drift-timer-window', name, chain);
  });

  it('given 200+ passes on one object, it continues as new, loses no request, and its events and actions per pass are measured', async () => {
    const name = t.unique('marathon');
    let obj = await counters.create(name, { message: 'gen 1' });
    const handle = await counters.request(obj, 'added');
    await counters.settled(name, 1);
    const started = Date.now();
    // Passes 2..100: a spec change each (status and search attributes change every pass).
    for (let g = 2; g <= 100; g++) {
      obj = await counters.patchSpec(name, { message: `gen ${g}` });
      await counters.request(obj, 'updated');
      await counters.settled(name, g);
    }
    // Passes 101..249: steady state, a resync request each (nothing to write).
    for (let p = 101; p <= 249; p++) {
      await counters.request(obj, 'resync');
      await counters.settled(name, p);
    }
    const elapsed = Date.now() - started;
    // Pass 250 is the last of its run: a spec change arriving while it runs must survive continue-as-new.
    await counters.request(obj, 'resync');
    // Caught while the pass runs (observe, three steps, status): polled often, since a pass is short.
    await waitFor(
      async () => {
        const s = await counters.state(name);
        return s.passes === 249 && s.reconciling ? s : undefined;
      },
      30_000,
      10,
    );
    const last = await counters.patchSpec(name, { message: 'the final word' });
    await counters.request(last, 'updated');
    await counters.waitForPhase(name, 'Ready', 101);
    const final = await counters.settled(name, 251);
    expect(final.observedGeneration).toBe(101);
    expect(final.run).toBe(6); // 50 passes per run: runs 1-5 continued as new

    // No request lost: every generation was reconciled, every step's effect once.
    const effects = await stepEffects(pool, obj.metadata.uid!);
    for (const g of [...Array.from({ length: 100 }, (_, i) => i + 1), 101]) {
      for (const step of ['prepare', 'publish', 'audit']) expect(effects[`${step}@${g}`]).toBe(1);
    }

    const workflowId = handle.workflowId;
    const runIds = await waitFor(async () => {
      const ids = await runsOf(t.temporal, workflowId);
      return ids.length === 6 ? ids : undefined;
    });
    const costs = [];
    for (const runId of runIds) {
      const history = await t.temporal.workflow.getHandle(workflowId, runId).fetchHistory();
      costs.push(historyCost(history));
    }
    const perRun = costs.map((c, i) => ({
      run: i + 1,
      events: c.events,
      actions: c.actions,
      eventsPerPass: +(c.events / 50).toFixed(2),
      actionsPerPass: +(c.actions / 50).toFixed(2),
    }));
    // Runs 3 and 4 are pure steady state (passes 101-200): 1 signal + 1 local observe + 3 activities per pass.
    const steady = costs.slice(2, 4);
    const steadyEvents = steady.reduce((n, c) => n + c.events, 0) / 100;
    const steadyActions = steady.reduce((n, c) => n + c.actions, 0) / 100;
    const changing = costs.slice(0, 2);
    const report = {
      steps: 3,
      activitiesPerSteadyPass: 4,
      target: { eventsPerPass: 4 + 6 * 3, actionsPerPass: 1 + 3 },
      steadyState: { eventsPerPass: steadyEvents, actionsPerPass: steadyActions, byType: steady[0]!.byType },
      specChangePerPass: {
        eventsPerPass: changing.reduce((n, c) => n + c.events, 0) / 100,
        actionsPerPass: changing.reduce((n, c) => n + c.actions, 0) / 100,
        byType: changing[1]!.byType,
      },
      perRun,
      msPerPassWallClock: +(elapsed / 248).toFixed(1),
    };
    mkdirSync(join(__dirname, '../../test-artifacts'), { recursive: true });
    writeFileSync(
      join(__dirname, '../../test-artifacts/object-workflow-cost.json'),
      `${JSON.stringify(report, null, 2)}\n`,
    );
    process.stdout.write(`object workflow cost: ${JSON.stringify(report)}\n`);
    // Steady state: 1 signal + observe (a local activity: one action) + 3 step activities per pass, and
    // well under 10,240 events per run.
    expect(steadyActions).toBeGreaterThanOrEqual(5);
    // + the run's start, its two upserts and the patch marker, shared by its 50 passes
    expect(steadyActions).toBeLessThanOrEqual(5.12);
    expect(Math.max(...costs.map((c) => c.events))).toBeLessThan(10_240);
    await recordHistory('continue-as-new-carrying-request', () =>
      t.temporal.workflow.getHandle(workflowId, runIds[4]).fetchHistory(),
    );
  }, 600_000);
});
