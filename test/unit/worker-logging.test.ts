/**
 * The worker's Temporal logs as pino writes them: a failed activity attempt (each retry of a step)
 * is one compact line, and no task token is ever written. The SDK's own activity runner produces the
 * records, so the test sees what a worker's log would show.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { noopMetricMeter } from '@temporalio/common';
import { Activity } from '@temporalio/worker/lib/activity';
import type { Info } from '@temporalio/activity';
import { HomeostatError, toApplicationFailure } from '../../core/errors';
import { attemptFailedMessage, PinoTemporalLogger } from '../../workers/logger';

const taskToken = 'CiQ2ZjU3YzUzNS1zZWNyZXQtdGFzay10b2tlbg==';

function captured(): { logger: PinoTemporalLogger; lines: () => Record<string, unknown>[]; raw: () => string } {
  let text = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  const logger = new PinoTemporalLogger(pino({ level: 'trace' }, sink));
  return {
    logger,
    raw: () => text,
    lines: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

function info(attempt: number): Info {
  return {
    taskToken: Buffer.from(taskToken, 'base64'),
    base64TaskToken: taskToken,
    activityId: '3',
    activityType: 'apps.homeostat.dev/deploy',
    attempt,
    isLocal: false,
    namespace: 'default',
    taskQueue: 'homeostat',
    inWorkflow: true,
    workflowExecution: { workflowId: 'homeostat/homeostat.dev/App/pony-prod/pony-spawner', runId: 'run-1' },
    workflowType: 'objectWorkflow',
    workflowNamespace: 'default',
    heartbeatTimeoutMs: undefined,
    heartbeatDetails: undefined,
    scheduledTimestampMs: 0,
    startToCloseTimeoutMs: 60_000,
    scheduleToCloseTimeoutMs: 0,
    currentAttemptScheduledTimestampMs: 0,
    priority: {},
    retryPolicy: undefined,
  } as unknown as Info;
}

async function failAttempt(logger: PinoTemporalLogger, attempt: number): Promise<void> {
  const activity = new Activity(
    info(attempt),
    undefined,
    undefined as never,
    undefined as never,
    undefined,
    () => undefined,
    undefined,
    logger,
    noopMetricMeter,
    [],
  );
  const step = async (): Promise<never> => {
    const cause = new Error('connect ECONNREFUSED 10.0.0.7:443');
    throw toApplicationFailure(new HomeostatError('ERR_STEP_FAILED', 'announce: upstream refused', { cause }), {
      attempt,
    });
  };
  await expect(activity.runNoEncoding(step, { args: [], headers: {} })).rejects.toThrow('announce: upstream refused');
}

describe('worker logging', () => {
  it('given a step attempt that fails, it logs one compact line: object, step, attempt and message, no stack or token', async () => {
    const log = captured();
    await failAttempt(log.logger, 2);
    const failed = log.lines().filter((l) => l.msg === attemptFailedMessage);
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({
      level: 40,
      workflowId: 'homeostat/homeostat.dev/App/pony-prod/pony-spawner',
      activityType: 'apps.homeostat.dev/deploy',
      attempt: 2,
      err: 'announce: upstream refused',
      type: 'StepFailed',
    });
    expect(Object.keys(failed[0]!).sort()).toEqual(
      [
        'activityType',
        'attempt',
        'durationMs',
        'err',
        'isLocal',
        'level',
        'msg',
        'pid',
        'hostname',
        'time',
        'type',
        'workflowId',
      ].sort(),
    );
    expect(log.lines().some((l) => l.msg === 'Activity failed')).toBe(false);
    expect(log.raw()).not.toContain('ECONNREFUSED');
    expect(log.raw()).not.toMatch(/\bat \S+ \(/); // no stack frame
  });

  it('given any SDK record carrying a task token, the token is not written', async () => {
    const log = captured();
    await failAttempt(log.logger, 1); // also logs 'Activity started' with the activity's attributes
    log.logger.info('Activity heartbeat', { taskToken, activityId: '3' });
    expect(log.lines().length).toBeGreaterThanOrEqual(3);
    expect(log.lines().find((l) => l.msg === 'Activity started')).toMatchObject({ activityId: '3' });
    expect(log.raw()).not.toContain(taskToken);
    expect(log.raw()).not.toContain('taskToken');
  });
});
