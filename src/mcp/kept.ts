// Whole answers that did not fit in 100,000 characters, kept for the session as resources: the
// cut answer links to the whole one (a resource_link block, and `truncated.resource_uri`), which
// resources/read gives back, so the rest of a paid answer is had without buying it again.
//
// The tools cut their lists with fitRows (src/mcp/answers.ts) and never see the session's store of
// answers: the call being served is found through an AsyncLocalStorage that callTool opens around
// each tool, so fitRows keeps the whole answer of the call it cuts, and `truncation()` names it.
import { AsyncLocalStorage } from 'node:async_hooks';

/** The most whole answers a session keeps; the oldest goes first. */
export const MAX_KEPT = 20;
const SCHEME = 'company-data://answers/';

export interface KeptAnswer {
  uri: string;
  /** The tool that answered, and when: for resources/list. */
  name: string;
  description: string;
  text: string;
}

export class KeptAnswers {
  private readonly answers = new Map<string, KeptAnswer>();
  private next = 1;

  keep(tool: string, whole: unknown, at: number): string {
    const uri = `${SCHEME}${this.next++}`;
    this.answers.set(uri, {
      uri,
      name: `${tool} answer ${uri.slice(SCHEME.length)}`,
      description: `The whole answer of a ${tool} call at ${new Date(at).toISOString().slice(0, 19)}Z, as JSON`,
      text: JSON.stringify(whole),
    });
    for (const oldest of this.answers.keys()) {
      if (this.answers.size <= MAX_KEPT) break;
      this.answers.delete(oldest);
    }
    return uri;
  }

  list(): KeptAnswer[] {
    return [...this.answers.values()];
  }

  read(uri: string): KeptAnswer | undefined {
    return this.answers.get(uri);
  }
}

/** The call being served: how to keep its whole answer, and the URI once it is kept. */
export interface ServedCall {
  keep(whole: unknown): string;
  kept?: string;
}

const served = new AsyncLocalStorage<ServedCall>();

/** Runs one tool with `call` as the call being served. */
export function serving<T>(call: ServedCall, run: () => Promise<T>): Promise<T> {
  return served.run(call, run);
}

/** Keeps the whole answer of the call being served (once), and says where: undefined outside a call. */
export function keepWhole(whole: () => unknown): string | undefined {
  const call = served.getStore();
  if (call) call.kept ??= call.keep(whole());
  return call?.kept;
}

/** Where the call being served kept its whole answer, if it did. */
export function keptUri(): string | undefined {
  return served.getStore()?.kept;
}
