/**
 * Fairness between teams on one task queue (issue 27): an object's workflow carries its Kubernetes
 * namespace as fairness key, and the local stack's Temporal server (`matching.enableFairness`) dispatches
 * a backlog round-robin across keys, weighted. One team's flood of new objects therefore does not queue
 * another team's object behind it. The mechanism is shown by order, not by time: a backlog is built
 * while no worker polls (a burst larger than the workers can take), then one worker takes two workflow
 * tasks at a time, and the order in which the server handed out each workflow's first workflow task is
 * read from the histories.
 */
import { NativeConnection, type WorkflowBundleOption } from '@temporalio/worker';
import pino from 'pino';
import { objectWorkflowStartOptions, objectWorkflowType, type ObjectRef } from '../../core/definitions';
import type { FairnessWeights } from '../../core/fairness';
import { builtinOperator } from '../../builtin';
import { bundleObjectWorkflows, createHomeostatWorker } from '../../workers/create-worker';
import { eventually } from '../support/eventually';
import { randomSuffix, useStack } from '../support/harness';
import { installBuiltinCrds } from '../support/homeostat';

jest.setTimeout(420_000);

describe('fairness between teams on one task queue', () => {
  const t = useStack();
  let workflowBundle: WorkflowBundleOption;
  beforeAll(async () => {
    installBuiltinCrds(t);
    workflowBundle = await bundleObjectWorkflows();
  });

  /** A team: one Kubernetes namespace (its fairness key) and its objects. */
  const team = (label: string, count: number): ObjectRef[] => {
    const namespace = `${label}-${randomSuffix()}`;
    return Array.from({ length: count }, (_, i) => ({
      group: 'homeostat.dev',
      version: 'v1alpha1',
      kind: 'App',
      namespace,
      name: `${label}-${i}`,
    }));
  };

  /** When the server handed out a workflow's first workflow task (its first WorkflowTaskStarted event). */
  async function firstTaskStarted(workflowId: string): Promise<bigint | undefined> {
    const history = await t.temporal.workflow.getHandle(workflowId).fetchHistory();
    const time = history.events?.find((e) => e.workflowTaskStartedEventAttributes)?.eventTime;
    return time ? BigInt(String(time.seconds ?? 0)) * 1_000_000_000n + BigInt(time.nanos ?? 0) : undefined;
  }

  /**
   * Starts the objects' workflows in the given order on a fresh task queue with no worker polling (a
   * backlog), then one worker drains it; returns the workflow ids in the order their first workflow
   * task was dispatched. `withPriority: false` starts them as a client unaware of fairness would.
   */
  async function drainOrder(refs: ObjectRef[], weights: FairnessWeights, withPriority = true): Promise<string[]> {
    const taskQueue = `fairness-${randomSuffix()}`;
    const ids: string[] = [];
    for (const ref of refs) {
      const { priority, ...options } = objectWorkflowStartOptions(ref, taskQueue, weights);
      const handle = await t.temporal.workflow.start(
        objectWorkflowType,
        withPriority ? { ...options, priority } : options,
      );
      ids.push(handle.workflowId);
    }
    const connection = await NativeConnection.connect({ address: t.endpoints.temporalAddress });
    const worker = await createHomeostatWorker({
      connection,
      namespace: t.endpoints.temporalNamespace,
      taskQueue,
      workflowBundle,
      operator: builtinOperator,
      kc: t.kc,
      logger: pino({ level: 'warn' }),
      // Two at a time, the fewest the SDK allows with a sticky cache: the backlog drains slowly.
      maxConcurrentWorkflowTaskExecutions: 2,
    });
    const running = worker.run();
    try {
      // The objects do not exist: each first pass finds its object gone and the workflow ends.
      const times = await eventually(
        'every workflow to get its first workflow task',
        () => Promise.all(ids.map(firstTaskStarted)),
        (all) => all.every((x) => x !== undefined),
        300_000,
      );
      return ids
        .map((id, i) => ({ id, at: times[i]! }))
        .sort((x, y) => (x.at < y.at ? -1 : x.at > y.at ? 1 : 0))
        .map((x) => x.id);
    } finally {
      worker.shutdown();
      await running.catch(() => {});
      await connection.close();
    }
  }

  const idsOf = (refs: ObjectRef[]): Set<string> =>
    new Set(refs.map((ref) => objectWorkflowStartOptions(ref).workflowId));

  it('given a backlog of 40 new objects of team A, the one new object of team B is served before half of it drains', async () => {
    const teamA = team('team-a', 40);
    const teamB = team('team-b', 1);
    const order = await drainOrder([...teamA, ...teamB], {});
    const rankOfB = order.indexOf([...idsOf(teamB)][0]!) + 1;
    process.stdout.write(`fairness on: team B's first pass was served ${rankOfB}. of ${order.length}\n`);
    // First-in, first-out serves it 41st; round-robin across the two keys serves it first or second.
    expect(rankOfB).toBeLessThanOrEqual(20);
  });

  it('given the same backlog started without a fairness key, it serves team B last (first-in, first-out)', async () => {
    const teamA = team('team-a', 40);
    const teamB = team('team-b', 1);
    const order = await drainOrder([...teamA, ...teamB], {}, false);
    const rankOfB = order.indexOf([...idsOf(teamB)][0]!) + 1;
    process.stdout.write(`fairness key absent: team B's first pass was served ${rankOfB}. of ${order.length}\n`);
    expect(rankOfB).toBeGreaterThan(20);
  });

  it('given a namespace of weight 3 and one of weight 1 with 20 objects each in a backlog, the heavier gets about 3 of every 4 first passes', async () => {
    const light = team('light', 20);
    const heavy = team('heavy', 20);
    // The light team's objects come first: first-in, first-out would serve all of them first.
    const order = await drainOrder([...light, ...heavy], { [heavy[0]!.namespace!]: 3 });
    const heavyIds = idsOf(heavy);
    const heavyInFirstHalf = order.slice(0, 20).filter((id) => heavyIds.has(id)).length;
    process.stdout.write(`fairness weights 3:1: the heavier team got ${heavyInFirstHalf} of the first 20 passes\n`);
    // Weights 3:1 give it 15 of the first 20; equal weights would give 10, first-in, first-out 0.
    expect(heavyInFirstHalf).toBeGreaterThanOrEqual(13);
  });
});
