// Placeholder until the sandbox lands.
export interface SandboxHandle {
  url: string;
  keys: Record<'full' | 'restricted' | 'free' | 'empty', string>;
  close(): Promise<void>;
}
export async function startSandbox(_options: { host?: string; port?: number }): Promise<SandboxHandle> {
  throw new Error('sandbox not implemented yet');
}
