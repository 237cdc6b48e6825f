/**
 * What `wake` does when the server's routing flag (`routingConfigUpdateState`) stays in progress past
 * its wait (temporalio/temporal#11842): it asks the Current version's workflow task queues, goes on when
 * each names the Current version and refuses when one does not. The server's answers are scripted: a
 * flag stuck in progress cannot be caused on demand on the real server. The wake itself (listing,
 * signalling, moving runs) runs against the real stack in test/faults/live-upgrade.test.ts.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { formatWake } from '../../cli/rollout-output';
import { wake } from '../../core/rollout';

const target = { namespace: 'homeostat', deploymentName: 'ops' };
const inProgress = temporal.api.enums.v1.RoutingConfigUpdateState.ROUTING_CONFIG_UPDATE_STATE_IN_PROGRESS;
const workflowQueue = temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW;
const activityQueue = temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY;

/** A client whose deployment is stuck propagating to `v2`, and whose task queues name `routes[queue]` Current. */
function clientOf(routes: Record<string, string>) {
  const asked: string[] = [];
  const workflowService = {
    describeWorkerDeployment: () =>
      Promise.resolve({
        conflictToken: new Uint8Array(),
        workerDeploymentInfo: {
          routingConfig: { currentDeploymentVersion: { deploymentName: 'ops', buildId: 'v2' } },
          routingConfigUpdateState: inProgress,
          versionSummaries: [],
        },
      }),
    describeWorkerDeploymentVersion: () =>
      Promise.resolve({
        versionTaskQueues: [
          ...Object.keys(routes).map((name) => ({ name, type: workflowQueue })),
          { name: 'activities-only', type: activityQueue },
        ],
      }),
    describeTaskQueue: (req: { taskQueue: { name: string } }) => {
      asked.push(req.taskQueue.name);
      return Promise.resolve({
        versioningInfo: { currentDeploymentVersion: { deploymentName: 'ops', buildId: routes[req.taskQueue.name] } },
      });
    },
  };
  const workflow = {
    list: () => ({
      [Symbol.asyncIterator]: () => ({ next: () => Promise.resolve({ done: true, value: undefined }) }),
    }),
  };
  return { client: { workflowService, workflow } as unknown as Client, asked };
}

describe('wake when the server still reports the routing as propagating', () => {
  it('given every workflow task queue naming the Current version, it goes on and says the task queues confirmed the routing', async () => {
    const { client, asked } = clientOf({ a: 'v2', b: 'v2' });
    const woken = await wake(client, target, { routingTimeoutMs: 0 });
    expect(woken).toMatchObject({ currentBuildId: 'v2', routingConfirmedBy: 'task-queues', listed: 0 });
    expect(asked).toEqual(['a', 'b']); // the workflow task queues only
    expect(formatWake(woken)).toContain('the server still reports the routing as propagating');
  });

  it('given one task queue still naming the previous version, it refuses: try again later', async () => {
    const { client } = clientOf({ a: 'v2', b: 'v1' });
    await expect(wake(client, target, { routingTimeoutMs: 0 })).rejects.toMatchObject({
      code: 'ERR_ROLLOUT_REFUSED',
      message: expect.stringContaining('try wake again later'),
    });
  });

  it('given a version whose task queues cannot be read, it refuses rather than guess', async () => {
    const { client } = clientOf({ a: 'v2' });
    (client.workflowService as unknown as { describeTaskQueue: () => Promise<never> }).describeTaskQueue = () =>
      Promise.reject(new Error('unavailable'));
    await expect(wake(client, target, { routingTimeoutMs: 0 })).rejects.toMatchObject({ code: 'ERR_ROLLOUT_REFUSED' });
  });
});
