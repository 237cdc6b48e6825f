/**
 * Starting the benchmark's child processes (TypeScript through tsx, `--expose-gc` for memory
 * measurements) and talking to them over the IPC channel: each message the child reports is awaited
 * by type, in order; `stop` asks it to exit and kills it after 10 s.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { repoRoot } from '../../devstack/paths';

/** A running child process of the benchmark. */
export interface Child {
  readonly proc: ChildProcess;
  /** The next message the child reports; rejects if it is of another type, late, or the child exits. */
  next(type: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Asks the child to exit (SIGKILL after 10 s) and waits until it has. */
  stop(): Promise<void>;
}

/**
 * `HOMEOSTAT_BENCH_CPU_PROFILE_DIR`: the scale scenario's worker children (system `homeostatDrift`)
 * run with V8's CPU profiler (`--cpu-prof`), one `.cpuprofile` per thread (the main thread and the
 * workflow thread) written to that folder when the child exits normally (not when SIGKILLed), with a
 * copy of the workflow bundle its workflow thread ran, so `bench/profile-summary.ts` can name the
 * bundle's modules. `HOMEOSTAT_BENCH_CPU_PROFILE_INTERVAL_US`: the sampling interval (default 1000).
 */
function profileArgs(script: string, options: object): string[] {
  const dir = process.env.HOMEOSTAT_BENCH_CPU_PROFILE_DIR;
  const opts = options as { system?: string; bundlePath?: string };
  if (!dir || script !== 'worker-child.ts' || opts.system !== 'homeostatDrift') return [];
  mkdirSync(dir, { recursive: true });
  if (opts.bundlePath) copyFileSync(opts.bundlePath, join(dir, basename(opts.bundlePath)));
  const interval = process.env.HOMEOSTAT_BENCH_CPU_PROFILE_INTERVAL_US;
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`, ...(interval ? [`--cpu-prof-interval=${interval}`] : [])];
}

/** Forks `script` (a file in bench/children) with its options as JSON in the first argument. */
export function spawnChild(script: string, options: object): Child {
  const proc = fork(join(__dirname, script), [JSON.stringify(options)], {
    cwd: repoRoot,
    execArgv: ['--import', 'tsx', '--expose-gc', ...profileArgs(script, options)],
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  proc.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const queue: Record<string, unknown>[] = [];
  const waiters: ((m: Record<string, unknown>) => void)[] = [];
  proc.on('message', (m: Record<string, unknown>) => {
    const w = waiters.shift();
    if (w) w(m);
    else queue.push(m);
  });
  return {
    proc,
    next(type, timeoutMs = 900_000) {
      const queued = queue.shift();
      if (queued)
        return queued.type === type ? Promise.resolve(queued) : Promise.reject(new Error(`got ${String(queued.type)}`));
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${script}: no ${type} in ${timeoutMs} ms: ${stderr}`)),
          timeoutMs,
        );
        void exited.then(() => {
          clearTimeout(timer);
          reject(new Error(`${script} exited: ${stderr}`));
        });
        waiters.push((m) => {
          clearTimeout(timer);
          if (m.type === type) resolve(m);
          else reject(new Error(`${script}: expected ${type}, got ${JSON.stringify(m)}`));
        });
      });
    },
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.send({ type: 'exit' });
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
