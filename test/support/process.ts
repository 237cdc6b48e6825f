/** Process helpers the tests share. */

/** Whether a process with this ID exists (signal 0: checked, nothing sent). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
