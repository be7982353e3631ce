import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// `--drop-answers N`: a proxy between the deploy driver and yoke that lets the
// first N dispatches reach yoke, then loses their answers, as a flaky network
// would after the server acted. The driver recovers through its result waits.

export interface DropProxy {
  url: string;
  dropped: number;
  close(): Promise<void>;
}

export async function startDropProxy(target: string, drops: number): Promise<DropProxy> {
  const upstream = new URL(target);
  const state = { dropped: 0 };
  const server: Server = createServer((req, res) => {
    const isDispatch = req.method === 'POST' && /\/dispatch$/.test(req.url ?? '');
    const out = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        if (isDispatch && state.dropped < drops) {
          state.dropped++;
          // yoke acted and answered; the answer never arrives.
          answer.resume();
          answer.on('end', () => req.socket.destroy());
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => req.socket.destroy());
    req.pipe(out);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get dropped() {
      return state.dropped;
    },
    close: () => new Promise<void>((r) => (server.close(() => r()), server.closeAllConnections())),
  };
}
