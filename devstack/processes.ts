import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { createServer, connect } from 'node:net';

/** A server process the stack started, as recorded in the stack's state file. */
export interface ManagedProcess {
  /** Component name, such as `etcd`. */
  readonly name: string;
  /** Process ID; the process leads its own process group. */
  readonly pid: number;
  /** The executable, used to tell a live process from an unrelated one that reused the PID. */
  readonly executable: string;
  /** Where its stdout and stderr go. */
  readonly logFile: string;
}

/** Options for {@link startProcess}. */
export interface StartProcessOptions {
  readonly name: string;
  readonly executable: string;
  readonly args: readonly string[];
  readonly logFile: string;
  readonly cwd?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Run as this user (PostgreSQL refuses to run as root). */
  readonly uid?: number;
  readonly gid?: number;
}

/**
 * Runs `fn` with the file-creation mask 077, so that every file and folder it — or a process it starts
 * — creates is private to this user (0600 / 0700) whatever mode the creator asks for: servers write
 * their data, logs and keys without asking for private modes. The mask is the process's own, so this
 * holds only for synchronous work (a spawn, an exec), restored before anything else runs.
 */
export function withPrivateFiles<T>(fn: () => T): T {
  const previous = process.umask(0o077);
  try {
    return fn();
  } finally {
    process.umask(previous);
  }
}

/**
 * Starts a server detached in its own process group, with output appended to a log file, so that it
 * outlives a CLI that started it and can be stopped as a group. What it creates is private to its user
 * ({@link withPrivateFiles}).
 */
export function startProcess(options: StartProcessOptions): ManagedProcess {
  const fd = openSync(options.logFile, 'a', 0o600);
  try {
    const child = withPrivateFiles(() =>
      spawn(options.executable, options.args, {
        cwd: options.cwd,
        env: options.env ?? process.env,
        detached: true,
        stdio: ['ignore', fd, fd],
        ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.gid }),
      }),
    );
    if (child.pid === undefined) throw new Error(`failed to start ${options.name} (${options.executable})`);
    child.unref();
    return { name: options.name, pid: child.pid, executable: options.executable, logFile: options.logFile };
  } finally {
    closeSync(fd);
  }
}

/** Whether the process is running (not a zombie) and still runs the recorded executable. */
export function isRunning(proc: Pick<ManagedProcess, 'pid' | 'executable'>): boolean {
  try {
    const stat = readFileSync(`/proc/${proc.pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    if (state === 'Z' || state === 'X') return false;
    const cmdline = readFileSync(`/proc/${proc.pid}/cmdline`, 'utf8');
    if (cmdline.split('\0')[0] === proc.executable) return true;
    return readlinkSync(`/proc/${proc.pid}/exe`) === realpathSync(proc.executable);
  } catch {
    return false;
  }
}

/** Whether any process with this PID exists (for owners, whose executable is not recorded). */
export function pidExists(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Stops a process group: `signal` first, SIGKILL after `graceMs`. Resolves once the leader is gone.
 * @param graceMs @default 10000
 */
export async function stopProcess(
  proc: ManagedProcess,
  signal: NodeJS.Signals = 'SIGTERM',
  graceMs = 10_000,
): Promise<void> {
  if (!isRunning(proc)) return;
  const kill = (sig: NodeJS.Signals): void => {
    try {
      process.kill(-proc.pid, sig);
    } catch {
      try {
        process.kill(proc.pid, sig);
      } catch {
        /* already gone */
      }
    }
  };
  kill(signal);
  const deadline = Date.now() + graceMs;
  while (isRunning(proc) && Date.now() < deadline) await sleep(50);
  if (isRunning(proc)) {
    kill('SIGKILL');
    while (isRunning(proc)) await sleep(50);
  }
  // The group's other members (PostgreSQL's backends, say) follow their leader; make sure.
  kill('SIGKILL');
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolvePort(port));
    });
  });
}

/** Distinct free ports. */
export async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
export function isListening(port: number): Promise<boolean> {
  return new Promise((resolveListening) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolveListening(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolveListening(false);
    });
    socket.once('error', () => resolveListening(false));
  });
}

/**
 * Polls `check` until it returns true, or throws after `timeoutMs` with the last error and the tail of
 * the process log, so a server that fails to start says why.
 */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  options: { timeoutMs: number; intervalMs?: number; proc?: ManagedProcess },
): Promise<void> {
  const deadline = Date.now() + options.timeoutMs;
  let lastError: unknown;
  for (;;) {
    if (options.proc && !isRunning(options.proc)) {
      throw new Error(`${what}: process exited while starting\n${logTail(options.proc.logFile)}`);
    }
    try {
      if (await check()) return;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const reason = lastError instanceof Error ? lastError.message : 'not ready';
      throw new Error(
        `${what}: not ready after ${options.timeoutMs} ms (${reason})${options.proc ? `\n${logTail(options.proc.logFile)}` : ''}`,
      );
    }
    await sleep(options.intervalMs ?? 200);
  }
}

/** The last lines of a log file. */
export function logTail(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}
