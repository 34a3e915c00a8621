// Placeholder until the HTTP layer lands.
import type { Client, Config, IO } from '../types.js';

export function createClient(_config: Config, _io: IO): Client {
  throw new Error('http client not implemented yet');
}
