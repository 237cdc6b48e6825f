/**
 * homeostat's production processes as children of a fault test: `cli/homeostat.ts worker` and
 * `cli/homeostat.ts bridge`, run by node itself through tsx's loader (`node --import tsx`), so the
 * child's PID is the process a SIGKILL hits and nothing is left behind.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

const cli = join(__dirname, '../../../cli/homeostat.ts');

/** Resolves after `ms`. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A worker or bridge process started by a test. */
export interface HomeostatProcess {
  readonly role: 'worker' | 'bridge';
  readonly child: ChildProcess;
  readonly pid: number;
  /** The port of `/healthz`, `/readyz` and `/metrics`. */
  readonly port: number;
  /** Every stdout line so far (pino JSON). */
  readonly lines: string[];
  /** Whether the process has exited. */
  readonly gone: boolean;
  /** Resolves with the exit code and signal once the process is gone. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal: NodeJS.Signals): void;
  /** Whether `/readyz` answers 200. */
  ready(): Promise<boolean>;
  /** A metric's value summed over the label sets that include `labels` (0 when absent). */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
}

/** Starts `homeostat <role>` with `env` added to this process's environment; resolves once its HTTP port answers. */
export async function spawnHomeostat(
  role: 'worker' | 'bridge',
  env: Record<string, string>,
): Promise<HomeostatProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', cli, role], {
    env: {
      ...process.env,
      LOG_LEVEL: 'info',
      ...(role === 'worker' ? { HOMEOSTAT_WORKER_PORT: '0' } : { HOMEOSTAT_BRIDGE_PORT: '0' }),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  let stderr = '';
  let gone = false;
  child.stderr.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-4000);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      gone = true;
      resolve({ code, signal });
    }),
  );
  const port = await new Promise<number>((resolve, reject) => {
    let buffer = '';
    child.stdout.on('data', (c: Buffer) => {
      buffer += c.toString();
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (lines.length < 20_000) lines.push(line);
        if (line.includes('"http listening"')) resolve((JSON.parse(line) as { port: number }).port);
      }
    });
    void exited.then(({ code, signal }) =>
      reject(new Error(`homeostat ${role} exited early (${code ?? signal}): ${stderr}`)),
    );
  });
  const pid = child.pid!;
  return {
    role,
    child,
    pid,
    port,
    lines,
    get gone() {
      return gone;
    },
    exited,
    kill(signal) {
      if (!gone) child.kill(signal);
    },
    async ready() {
      try {
        return (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200;
      } catch {
        return false;
      }
    },
    async metric(name, labels = {}) {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      let sum = 0;
      for (const line of text.split('\n')) {
        const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? ([0-9.e+-]+)$/.exec(line);
        if (!m || m[1] !== name) continue;
        const set = m[3] ?? '';
        if (Object.entries(labels).every(([k, v]) => set.includes(`${k}="${v}"`))) sum += Number(m[4]);
      }
      return sum;
    },
  };
}

/** Polls `fn` until it returns a truthy value; throws with `what` (and the last error) after `timeoutMs`. */
export async function waitUntil<T>(
  what: string,
  fn: () => Promise<T | undefined | false | null> | T | undefined | false | null,
  timeoutMs = 60_000,
  everyMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastErr instanceof Error ? `: ${lastErr.message}` : ''}`,
      );
    }
    await sleep(everyMs);
  }
}
