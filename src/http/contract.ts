// The contract version this CLI was built for, compared with what a server announces.
import { CONTRACT_VERSION } from '../error-catalog.js';
import { oneLine } from '../text.js';
import type { IO } from '../types.js';

let warned = false;

/**
 * Warns once per process when the server speaks another contract version: responses may then
 * carry shapes or codes this CLI does not know. Returns whether the versions match.
 */
export function checkContractVersion(io: IO, serverVersion: unknown): boolean {
  if (typeof serverVersion !== 'string' || serverVersion === CONTRACT_VERSION) return true;
  if (!warned) {
    warned = true;
    const theirs = oneLine(serverVersion).slice(0, 40);
    io.warn(
      `warning: the server speaks contract ${theirs}, this CLI was built for ${CONTRACT_VERSION}; some responses may not be understood (update company-data if anything looks wrong).`,
    );
  }
  return false;
}

/** For tests: forget that the warning was shown. */
export function resetContractWarning(): void {
  warned = false;
}
