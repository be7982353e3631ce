import { connect, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { recordOf } from '../../kernel/guards.js';

// TR20 TR06: the way out of a sandbox, an agent's or a command's. A forwarder
// inside (forwarder.ts) listens on the sandbox's loopback and relays each
// connection over a unix socket to the proxy here, outside, which decides by
// its own lists: hosts for CONNECT and plain HTTP, loopback ports for a
// command's named services, the model gateway for the model's port.

/** A refused connection: where to, and which command tried. */
export interface BlockedAttempt {
  host: string;
  command: string;
}

/** A port the forwarder listens on inside the sandbox, and what the proxy outside does with it. */
export type Forward = `${'proxy' | 'model' | 'loop'}:${number}`;

/**
 * The shell that starts the forwarder inside the sandbox and waits (ten seconds at most) until it listens, before
 * what follows it runs. `ready` is a file the sandbox may write, named by YOKE_FORWARD_READY.
 */
export function forwardPrelude(bridge: string, forwards: readonly Forward[]): string {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const forward = [process.execPath, join(bridge, 'forward.cjs'), join(bridge, 'proxy.sock'), ...forwards]
    .map(q)
    .join(' ');
  return `${forward} & i=0; while [ ! -e "$YOKE_FORWARD_READY" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; `;
}

/** What a contained process is told of its network: the proxy's port for every host, what goes direct, where the forwarder says it is ready. */
export function proxyEnv(port: number, direct: string, ready: string): Record<string, string> {
  const url = `http://127.0.0.1:${port}`;
  return {
    HTTPS_PROXY: url,
    HTTP_PROXY: url,
    https_proxy: url,
    http_proxy: url,
    ALL_PROXY: url,
    NO_PROXY: direct,
    no_proxy: direct,
    YOKE_FORWARD_READY: ready,
  };
}

/** Hosts a glob list allows: `registry.npmjs.org`, or `*.pythonhosted.org` for any subdomain. */
export function hostAllowed(host: string, allow: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  return allow.some((a) => {
    const p = a.toLowerCase();
    return p.startsWith('*.') ? h.endsWith(p.slice(1)) && h.length > p.length - 1 : h === p;
  });
}

export interface ProxyOptions {
  /** Hosts (globs) connections may go to. */
  allow: readonly string[];
  /** The model gateway's unix socket, which the model's port is relayed to. */
  gateway: string | null;
  /** Ports of this machine's loopback a `loop` connection may reach (a command's `127.0.0.1:PORT`); none by default. */
  loopback?: readonly number[];
  /** What a refused client is told, naming the setting that would let it through. */
  refusal?: (host: string) => string;
}

/** What an agent's refused connection is told. */
const agentRefusal = (host: string) =>
  `yoke's agent sandbox does not allow ${host}: add it to agent.network.allow in .github/yoke.yml if the agent needs it.`;

/** The proxy outside the sandbox, on a unix socket: CONNECT and plain-HTTP requests to allowed hosts go through, the rest get 403 and are kept. */
export class ContainProxy {
  readonly blocked: BlockedAttempt[] = [];
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly opts: ProxyOptions) {}

  async listen(path: string): Promise<void> {
    this.server = createServer((s) => this.handle(s));
    await new Promise<void>((r) => this.server!.listen(path, r));
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }

  private keep(host: string, command: string): void {
    if (!this.blocked.some((b) => b.host === host && b.command === command)) this.blocked.push({ host, command });
  }

  private refuse(client: Socket, host: string, command: string): void {
    this.keep(host, command);
    client.end(
      `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n\r\n${(this.opts.refusal ?? agentRefusal)(host)}\n`,
    );
  }

  private handle(client: Socket): void {
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => client.destroy());
    let buf = Buffer.alloc(0);
    let header: { kind: string; command: string; port: number } | null = null;
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      if (!header) {
        const nl = buf.indexOf(10);
        if (nl < 0) return;
        try {
          const h = recordOf(JSON.parse(buf.subarray(0, nl).toString('utf8')));
          header = { kind: String(h?.kind ?? ''), command: String(h?.command ?? ''), port: Number(h?.port) };
        } catch {
          client.destroy();
          return;
        }
        buf = buf.subarray(nl + 1);
        if (header.kind === 'model' && this.opts.gateway) {
          // Paused until the upstream is there: a stream with no data listener would drop what comes meanwhile.
          client.pause();
          client.off('data', onData);
          this.pipeTo(client, { path: this.opts.gateway }, buf, null);
          return;
        }
        if (header.kind === 'loop') {
          // A loopback service by its port: only those the operator named, whatever the header claims.
          client.pause();
          client.off('data', onData);
          const port = header.port;
          if (!Number.isInteger(port) || !(this.opts.loopback ?? []).includes(port)) {
            this.keep(`127.0.0.1:${String(port)}`, header.command || 'unknown');
            client.destroy();
            return;
          }
          this.pipeTo(client, { host: '127.0.0.1', port }, buf, null);
          return;
        }
      }
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      client.pause();
      client.off('data', onData);
      const head = buf.subarray(0, end).toString('latin1');
      const rest = buf.subarray(end + 4);
      const [method = '', target = ''] = head.split('\r\n')[0]!.split(' ');
      const command = header.command || 'unknown';
      if (method === 'CONNECT') {
        const [host = '', port = '443'] = target.split(':');
        if (!hostAllowed(host, this.opts.allow)) return this.refuse(client, host, command);
        this.pipeTo(client, { host, port: Number(port) }, rest, 'HTTP/1.1 200 Connection Established\r\n\r\n');
        return;
      }
      let url: URL;
      try {
        url = new URL(target);
      } catch {
        client.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
        return;
      }
      if (!hostAllowed(url.hostname, this.opts.allow)) return this.refuse(client, url.hostname, command);
      // Plain http through the proxy: the request goes on in origin form.
      const lines = head.split('\r\n');
      lines[0] = `${method} ${url.pathname}${url.search} ${lines[0]!.split(' ')[2] ?? 'HTTP/1.1'}`;
      this.pipeTo(
        client,
        { host: url.hostname, port: Number(url.port || 80) },
        Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), rest]),
        null,
      );
    };
    client.on('data', onData);
  }

  private pipeTo(
    client: Socket,
    to: { host: string; port: number } | { path: string },
    first: Buffer,
    reply: string | null,
  ): void {
    const up = connect(to, () => {
      if (reply) client.write(reply);
      if (first.length) up.write(first);
      client.pipe(up).pipe(client);
    });
    this.sockets.add(up);
    up.on('close', () => this.sockets.delete(up));
    up.on('error', () => client.destroy());
  }
}
