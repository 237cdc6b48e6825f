import Fastify from 'fastify';
import { answerWithProblems } from '../../api/problem-answers';
import type { ApiApp } from '../../api/route-context';
import { isDroppedWithItsTask } from '../../api/temporal-calls';

/** An app answering with problems whose one route throws `err`. */
async function answerTo(err: unknown): Promise<{ status: number; body: { code: string; detail: string } }> {
  const app = Fastify();
  answerWithProblems(app as unknown as ApiApp);
  app.get('/x', () => {
    throw err;
  });
  const res = await app.inject({ method: 'GET', url: '/x' });
  await app.close();
  return { status: res.statusCode, body: res.json() };
}

/** A Temporal client error as the client throws it: a gRPC status on the error or its cause. */
const grpcError = (code: number, message: string): Error =>
  Object.assign(new Error('Query failed', { cause: Object.assign(new Error(message), { code }) }), {});

describe('problem answers to Temporal’s errors', () => {
  it('given a state query no worker can take ("no poller seen for task queue recently"), it answers 503 naming the cause', async () => {
    // What the contract fuzzer met once: another file's object after that file's worker had stopped.
    const answer = await answerTo(
      grpcError(9, '9 FAILED_PRECONDITION: no poller seen for task queue recently, worker may be down'),
    );
    expect(answer).toEqual({
      status: 503,
      body: expect.objectContaining({ code: 'ERR_UNAVAILABLE', detail: expect.stringMatching(/no worker is polling/) }),
    });
  });

  it('given another failed precondition, it stays a logged 502', async () => {
    expect((await answerTo(grpcError(9, 'something else'))).status).toBe(502);
  });

  it('given a deadline or an unreachable frontend, it answers 504 and 503', async () => {
    expect((await answerTo(grpcError(4, 'deadline'))).body.code).toBe('ERR_TIMEOUT');
    expect((await answerTo(grpcError(14, 'unavailable'))).body.code).toBe('ERR_UNAVAILABLE');
  });
});

describe('an update dropped with its workflow task', () => {
  it('given the server’s "unexpected workflow task failure" refusal of an update, it is told apart from other failed preconditions', () => {
    // As the client threw it in CI: the update's RPC failed when the task that took it failed on the server.
    const dropped = Object.assign(new Error('Workflow Update failed'), {
      cause: Object.assign(
        new Error(
          '9 FAILED_PRECONDITION: Unable to perform workflow execution update due to unexpected workflow task failure.',
        ),
        { code: 9 },
      ),
    });
    expect(isDroppedWithItsTask(dropped)).toBe(true);
    expect(isDroppedWithItsTask(grpcError(9, '9 FAILED_PRECONDITION: no poller seen for task queue recently'))).toBe(
      false,
    );
    expect(isDroppedWithItsTask(grpcError(14, 'unexpected workflow task failure'))).toBe(false);
    expect(isDroppedWithItsTask(new Error('unexpected workflow task failure'))).toBe(false);
  });
});
