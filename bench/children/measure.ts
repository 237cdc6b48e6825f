/**
 * What the benchmark's child processes share: reading their options and reporting their memory to
 * the parent over the IPC channel. Children run with `--expose-gc`, so a measurement follows two
 * full collections and a short settle.
 */

/** Memory of a process, in bytes. */
export interface MemorySample {
  readonly rss: number;
  readonly heapUsed: number;
  readonly external: number;
}

/** Collects garbage (when exposed), waits a moment and samples memory. */
export async function measureMemory(): Promise<MemorySample> {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 2; i++) {
    gc?.();
    await new Promise((r) => setTimeout(r, 250));
  }
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external };
}

/** The JSON options passed as the first argument. */
export function childOptions<T>(): T {
  return JSON.parse(process.argv[2] ?? '{}') as T;
}

/** Sends a message to the parent. */
export function report(message: Record<string, unknown>): void {
  process.send?.(message);
}

/** Polls `check` every 100 ms until it is true (or `timeoutMs` passes). */
export async function until(check: () => boolean, timeoutMs = 600_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

/** Exits when the parent says so or goes away. */
export function exitWithParent(onExit: () => Promise<void> = async () => {}): void {
  const exit = (): void => {
    void onExit()
      .catch(() => {})
      .finally(() => process.exit(0));
  };
  process.on('message', (m: { type?: string }) => {
    if (m?.type === 'exit') exit();
  });
  process.on('disconnect', exit);
}
