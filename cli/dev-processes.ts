/**
 * The processes of `homeostat dev`: the record of its own pid and its children's in the stack's
 * folder, the processes that name the folder, and the children a killed run left behind.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pidExists } from '../devstack/processes';

/** What `homeostat dev` records in {@link devProcessesPath}. */
export interface DevProcesses {
  /** The `homeostat dev` process. */
  readonly pid: number;
  /** The running children by name (`worker`, `bridge`, `api`), rewritten on every start and restart. */
  readonly children: Readonly<Record<string, number>>;
}

/** The file in a stack's folder where `homeostat dev` records its processes (see {@link DevProcesses}). */
export function devProcessesPath(dir: string): string {
  return join(dir, 'dev-processes.json');
}

function readDevProcesses(dir: string): DevProcesses | undefined {
  try {
    return JSON.parse(readFileSync(devProcessesPath(dir), 'utf8')) as DevProcesses;
  } catch {
    return undefined;
  }
}

/** The pids of processes, other than this one, whose command line or environment names `dir`. */
export function processesUsing(dir: string, where: ('cmdline' | 'environ')[] = ['cmdline']): number[] {
  const needle = `${dir}/`;
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid)
    .filter((p) =>
      where.some((file) => {
        try {
          return readFileSync(`/proc/${p}/${file}`, 'utf8').includes(needle);
        } catch {
          return false; // gone, or another user's environment
        }
      }),
    )
    .map(Number);
}

/** SIGKILLs a process's group (the process alone when it leads none). */
export function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
}

/**
 * Kills the children a killed `homeostat dev` of the same stack left behind: they are detached, so
 * nothing else ends them. Only processes whose environment still names the stack's folder.
 */
export function killOrphanedChildren(dir: string): void {
  const recorded = readDevProcesses(dir);
  if (!recorded || pidExists(recorded.pid)) return;
  const ours = new Set(processesUsing(dir, ['environ']));
  for (const pid of Object.values(recorded.children)) if (ours.has(pid)) killGroup(pid);
}
