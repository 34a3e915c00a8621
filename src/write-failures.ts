// An output that cannot be written (stdout, a batch's output file, the result store) is a problem of its
// own, named with where and why, and exits 8 (DESIGN.md: "an output that cannot be written"): a
// full disk is the user's to fix, not a bug of company-data.
import { Problem } from './problem.js';

/** How each errno of a refused write reads: the ones the user can fix (space, quota, mount, rights). */
const CAUSES: Readonly<Record<string, string>> = {
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EFBIG: 'file too large',
  EIO: 'input/output error',
  EROFS: 'read-only file system',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  // SQLite's names for the same, from the result store (better-sqlite3).
  SQLITE_FULL: 'no space left on device',
  SQLITE_IOERR: 'input/output error',
  SQLITE_READONLY: 'read-only file system',
};

function errnoOf(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Whether `error` is a refused write named in CAUSES (not a wrong path, which is a usage mistake). */
export function isWriteFailure(error: unknown): boolean {
  const code = errnoOf(error);
  return code !== undefined && (code in CAUSES || code.startsWith('SQLITE_IOERR'));
}

/**
 * The problem for a write to `where` (a path, or `stdout`) that failed with `error`: the reader of
 * stdout gone (`output_closed`), or the cause and the place (`write_failed`), as in
 * "no space left on device: /mnt/small/out.csv".
 */
export function writeProblem(error: unknown, where: string): Problem {
  const code = errnoOf(error);
  if (where === 'stdout' && code === 'EPIPE') {
    return new Problem({
      code: 'output_closed',
      title: 'Output closed',
      detail: 'stdout was closed by its reader before every row was written',
      source: 'client',
      cause: error,
    });
  }
  const known = code?.startsWith('SQLITE_IOERR') ? 'SQLITE_IOERR' : code;
  const cause = (known && CAUSES[known]) ?? code ?? (error instanceof Error ? error.message : String(error));
  return new Problem({
    code: 'write_failed',
    title: 'Cannot write',
    detail: `${cause}: ${where}`,
    source: 'client',
    cause: error,
  });
}
