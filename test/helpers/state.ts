// Every run of the CLI in a test gets a result store of its own unless the test names one
// (COMPANY_DATA_STORE, XDG_STATE_HOME or HOME): answers stored by one test must never be reused by
// another, nor land in the developer's own ~/.local/state. A test that re-runs a command on the
// same store (a resume) passes the store it wants.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let root: string | undefined;
let next = 0;

function stateRoot(): string {
  root ??= mkdtempSync(join(tmpdir(), 'cd-test-state-'));
  return root;
}

/**
 * Removes the stores of the test file that just ended (test/helpers/state-cleanup.ts, a setup file
 * of every project): a worker may be ended before any exit handler of its own could run.
 */
export function removeStateRoot(): void {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
}

const NAMES_A_STORE = ['COMPANY_DATA_STORE', 'XDG_STATE_HOME', 'HOME'];

/** `env` with a fresh XDG_STATE_HOME when it names no store of its own. */
export function withOwnState<T extends Record<string, string | undefined>>(env: T | undefined): T {
  const given = env ?? ({} as T);
  if (NAMES_A_STORE.some((name) => name in given)) return given;
  return { ...given, XDG_STATE_HOME: join(stateRoot(), `state-${next++}`) };
}
