import type { CliIo, GlobalOptions } from './client.js';

// How the deploy driver reaches yoke: HTTPS with the operator token. A lost
// answer (the connection dropped, or no answer within the client's limit) is
// 'lost', which the driver recovers by waiting on the reservation (DX08).

/** An answer as it came: the driver reads it by its route's answer schema (http/api/answers.ts). */
export interface Answer {
  status: number;
  json: unknown;
}

export type Sent = Answer | 'lost';

export interface DriverTransport {
  /** https: yoke's API; db: the database door (the same API in this process, on loopback). */
  readonly kind: 'https' | 'db';
  send(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Sent>;
}

export function httpsTransport(
  io: CliIo,
  opts: GlobalOptions,
  timeoutMs: number,
  kind: 'https' | 'db' = 'https',
): DriverTransport {
  const url = (opts.url ?? io.env.YOKE_URL ?? 'http://localhost:3000').replace(/\/$/, '');
  const token = opts.token ?? io.env.YOKE_TOKEN ?? '';
  return {
    kind,
    async send(method, path, body, headers = {}) {
      try {
        const res = await io.fetch(`${url}${path}`, {
          method,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(timeoutMs),
        });
        const text = await res.text();
        let json: unknown = null;
        try {
          json = text ? JSON.parse(text) : null;
        } catch {
          return 'lost'; // a cut answer
        }
        return { status: res.status, json };
      } catch {
        return 'lost';
      }
    },
  };
}
