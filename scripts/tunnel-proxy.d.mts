// Types of tunnel-proxy.mjs, for the tests (test/helpers/server.ts).
export function startTunnelProxy(): Promise<{ url: string; tunnels: string[]; close: () => Promise<void> }>;
