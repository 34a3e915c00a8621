// Whether a process of this host still exists: a pid that `kill(pid, 0)` cannot find is gone. Used
// for owners in the result store and for a killed run's temporary output.
/** True only when no such process exists (EPERM: it exists, under another user). */
export function processIsGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
