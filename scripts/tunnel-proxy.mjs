// An HTTP proxy on loopback that tunnels every CONNECT to the same port on 127.0.0.1, whatever
// host it names (`service.invalid:4100` reaches 127.0.0.1:4100), and records what it was asked
// for. The build's code-cache warm-up sends a batch through it (undici loads only for proxied
// calls); the tests use it to run calls over undici.
import { createServer } from 'node:http';
import { connect } from 'node:net';

export async function startTunnelProxy() {
  const tunnels = [];
  const proxy = createServer((_req, res) => res.writeHead(405).end());
  proxy.on('connect', (req, socket) => {
    tunnels.push(req.url ?? '');
    const onward = connect(Number((req.url ?? '').split(':').pop()), '127.0.0.1', () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      onward.pipe(socket).pipe(onward);
    });
    onward.on('error', () => socket.destroy());
    socket.on('error', () => onward.destroy());
  });
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${proxy.address().port}`,
    tunnels,
    close: () =>
      new Promise((resolve) => {
        proxy.closeAllConnections();
        proxy.close(() => resolve());
      }),
  };
}
