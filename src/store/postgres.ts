// Placeholder until the PostgreSQL back end lands (branch pg).
import type { AnswerStore } from './types.js';

export async function openPostgresStore(
  _url: string,
  _options: { env: NodeJS.ProcessEnv; schema?: string },
): Promise<AnswerStore> {
  throw new Error('not yet');
}
