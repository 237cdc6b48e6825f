/** Polling until a condition holds, for tests that wait on a real cluster. */

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `read` until `done` holds for its value; fails with the last value after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  read: () => Promise<T>,
  done: (v: T) => boolean,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      last = await read();
      if (done(last)) return last;
    } catch (err) {
      lastError = err;
    }
    await sleep(250);
  }
  throw new Error(`${what}: not after ${timeoutMs} ms; last: ${JSON.stringify(last) ?? String(lastError)}`);
}
