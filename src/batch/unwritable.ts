// A batch whose output or store cannot be written (a reader of stdout gone, a full disk) stops
// as an interrupt does: no new lookups, those in flight finish and are stored. Every row it
// would still buy is a row nobody can read, or an answer that could be lost.
import type { Writable } from 'node:stream';
import type { Problem } from '../problem.js';
import { writeProblem } from '../write-failures.js';

export class WriteFailures {
  /** The first failed write, as the problem to report. */
  problem: Problem | undefined;
  private onFirst: (() => void) | undefined;

  /** Calls `stop` once, at the first failure (at once when one was already seen). */
  whenFailed(stop: () => void): void {
    this.onFirst = stop;
    if (this.problem) stop();
  }

  /** Records a failed write to `where` (a path, or `stdout`); the first one wins. */
  fail(error: unknown, where: string): void {
    if (this.problem) return;
    this.problem = writeProblem(error, where);
    this.onFirst?.();
  }

  /** Every error of `stream` is a failed write to `where`. */
  watch(stream: Writable, where: string): void {
    stream.on('error', (error) => this.fail(error, where));
  }

  /**
   * Whether the run stops for a failed write, one of `stream` included: a write refused at once
   * shows on the stream before its 'error' event is emitted, and the error thrown meanwhile by
   * whoever wrote next ("the output closed") is only its consequence.
   */
  explains(stream: Writable, where: string): boolean {
    if (stream.errored) this.fail(stream.errored, where);
    return this.problem !== undefined;
  }
}
