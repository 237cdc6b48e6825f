/**
 * A small process supervisor for `homeostat dev`: it keeps its child processes running the way a
 * Deployment keeps its Pods (restartPolicy Always, with the kubelet's crash-loop backoff), and stops
 * them as a kubelet does (SIGTERM, then SIGKILL after a grace period).
 *
 * Each child is spawned detached, in a session and process group of its own: a Ctrl-C in the terminal
 * then reaches `homeostat dev` alone, which stops the children once and in order. Without it every
 * child got the terminal's SIGINT as well as the parent's SIGTERM, and the worker shut down twice.
 */
import { type ChildProcess, spawn } from 'node:child_process';

/** The backoff between restarts of a child that keeps exiting. */
export interface RestartBackoff {
  /** Delay before the first restart. @default 500 */
  readonly initialMs?: number;
  /** Longest delay; each restart in a row doubles the previous one up to this. @default 10000 */
  readonly maxMs?: number;
  /** A child that ran at least this long before exiting starts over at `initialMs`. @default 30000 */
  readonly resetAfterMs?: number;
}

/**
 * The delay before restart number `restart` (1 for the first) of a child that keeps exiting:
 * `initialMs` doubled per restart in a row, at most `maxMs`.
 */
export function restartDelay(restart: number, backoff: RestartBackoff = {}): number {
  const initial = backoff.initialMs ?? 500;
  const max = backoff.maxMs ?? 10_000;
  return Math.min(max, initial * 2 ** Math.max(0, Math.min(restart - 1, 30)));
}

/** A child process the supervisor keeps running. */
export interface SupervisedProcess {
  /** Its name in messages and in {@link Supervisor.pids}, e.g. `worker`. */
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  /** Where its stderr goes. @default 'inherit' */
  readonly stderr?: 'inherit' | 'ignore';
}

/** What happened to a supervised child. */
export type SupervisorEvent =
  | { readonly type: 'started'; readonly name: string; readonly pid: number }
  /** It exited while it was meant to run; `restart` (counted per child) follows after `delayMs`. */
  | {
      readonly type: 'exited';
      readonly name: string;
      readonly pid: number;
      /** `SIGKILL`, or `code 1`. */
      readonly reason: string;
      readonly restart: number;
      readonly delayMs: number;
    }
  | { readonly type: 'restarted'; readonly name: string; readonly pid: number; readonly restart: number };

/** Options of {@link Supervisor}. */
export interface SupervisorOptions {
  readonly backoff?: RestartBackoff;
  /** Called on every start, unexpected exit and restart (the dev command's progress view). */
  readonly onEvent?: (event: SupervisorEvent) => void;
  /** The clock, injected by tests. @default Date.now */
  readonly now?: () => number;
}

interface Slot {
  readonly spec: SupervisedProcess;
  child?: ChildProcess;
  startedAt: number;
  /** Restarts so far (shown to the user). */
  restarts: number;
  /** Restarts in a row without a run of `resetAfterMs` (drives the backoff). */
  crashLoop: number;
  timer?: NodeJS.Timeout;
  exited?: Promise<void>;
}

const exitReason = (code: number | null, signal: NodeJS.Signals | null): string =>
  signal ? signal : `code ${code ?? '?'}`;

/** Keeps child processes running until {@link Supervisor.stop} (see the module doc). */
export class Supervisor {
  private readonly slots = new Map<string, Slot>();
  private stopping = false;
  private readonly now: () => number;

  constructor(private readonly options: SupervisorOptions = {}) {
    this.now = options.now ?? Date.now;
  }

  /** Starts a child and keeps it running. */
  start(spec: SupervisedProcess): void {
    if (this.stopping) throw new Error(`supervisor is stopping; not starting ${spec.name}`);
    if (this.slots.has(spec.name)) throw new Error(`${spec.name} is already supervised`);
    const slot: Slot = { spec, startedAt: 0, restarts: 0, crashLoop: 0 };
    this.slots.set(spec.name, slot);
    this.spawn(slot);
  }

  /** The pid of each running child, by name. */
  pids(): Record<string, number> {
    const pids: Record<string, number> = {};
    for (const [name, slot] of this.slots) {
      if (slot.child?.pid !== undefined && alive(slot.child)) pids[name] = slot.child.pid;
    }
    return pids;
  }

  /** Restarts so far, by name. */
  restarts(): Record<string, number> {
    return Object.fromEntries([...this.slots].map(([name, slot]) => [name, slot.restarts]));
  }

  /**
   * Stops every child: no more restarts, SIGTERM to each child's process group, SIGKILL to those still
   * running after `graceMs`. Resolves once all have exited, with the names of those that had to be
   * killed. Safe to call again.
   * @param graceMs @default 10000
   */
  async stop(graceMs = 10_000): Promise<string[]> {
    this.stopping = true;
    const slots = [...this.slots.values()];
    for (const slot of slots) clearTimeout(slot.timer);
    for (const slot of slots) if (slot.child && alive(slot.child)) signalGroup(slot.child, 'SIGTERM');
    const exited = Promise.all(slots.map((s) => s.exited ?? Promise.resolve()));
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), graceMs)));
    const late = (await Promise.race([exited, deadline])) === 'late';
    clearTimeout(timer);
    const killed = late ? slots.filter((s) => s.child && alive(s.child)).map((s) => s.spec.name) : [];
    if (late) this.kill();
    await exited;
    return killed;
  }

  /** Kills every child at once (SIGKILL to its process group) and restarts none. */
  kill(): void {
    this.stopping = true;
    for (const slot of this.slots.values()) {
      clearTimeout(slot.timer);
      if (slot.child && alive(slot.child)) signalGroup(slot.child, 'SIGKILL');
    }
  }

  private spawn(slot: Slot): void {
    const { spec } = slot;
    const child = spawn(spec.command, [...spec.args], {
      env: spec.env ?? process.env,
      detached: true,
      stdio: ['ignore', 'ignore', spec.stderr ?? 'inherit'],
    });
    slot.child = child;
    slot.startedAt = this.now();
    slot.exited = new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        resolve();
        this.onExit(slot, child, code, signal);
      });
      // A spawn failure emits 'error' and may never emit 'exit'.
      child.once('error', () => {
        resolve();
        if (child.pid === undefined) this.onExit(slot, child, null, null);
      });
    });
    if (child.pid === undefined) return;
    this.options.onEvent?.(
      slot.restarts === 0
        ? { type: 'started', name: spec.name, pid: child.pid }
        : { type: 'restarted', name: spec.name, pid: child.pid, restart: slot.restarts },
    );
  }

  private onExit(slot: Slot, child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.stopping || slot.child !== child) return;
    const ran = this.now() - slot.startedAt;
    slot.crashLoop = ran >= (this.options.backoff?.resetAfterMs ?? 30_000) ? 1 : slot.crashLoop + 1;
    slot.restarts += 1;
    const delayMs = restartDelay(slot.crashLoop, this.options.backoff);
    this.options.onEvent?.({
      type: 'exited',
      name: slot.spec.name,
      pid: child.pid ?? 0,
      reason: exitReason(code, signal),
      restart: slot.restarts,
      delayMs,
    });
    slot.timer = setTimeout(() => {
      if (!this.stopping) this.spawn(slot);
    }, delayMs);
  }
}

function alive(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Signals the child's process group (it leads one: spawned detached), or the child alone. */
function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      /* already gone */
    }
  }
}
