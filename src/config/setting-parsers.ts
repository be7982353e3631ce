import { z } from 'zod';

// The parsers the settings table (settings-table.ts) declares its variables with: each says what is wrong
// without naming the variable, which the table's problems print first.

/** TR08: the shortest webhook secret and operator token yoke accepts (`openssl rand -hex 32` makes 64 characters). */
export const SECRET_MIN_LENGTH = 32;

/** Hosts that are this machine: a URL to one never crosses a network. */
export const isLoopbackHost = (host: string): boolean =>
  host === 'localhost' || host === '[::1]' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);

/** The loopback port a URL names, when it is this machine's (the yoke API a run reports to), else null. */
export function loopbackPort(url: string | undefined): number | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    if (!isLoopbackHost(u.hostname)) return null;
    return Number(u.port || (u.protocol === 'https:' ? 443 : 80));
  } catch {
    return null;
  }
}

export const positiveInt = z
  .string()
  .trim()
  .regex(/^\d+$/, 'must be a whole number')
  .transform(Number)
  .refine((n) => n >= 1, 'must be at least 1');

export const commaList = z.string().transform((s) =>
  s
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0),
);

/** TR06 TR30: what a command yoke runs outside an agent's sandbox may reach on the network (YOKE_COMMAND_NETWORK_ALLOW). */
export type CommandNetworkAllow =
  /** The machine's own network, as yoke's user has it: the operator's explicit choice. */
  | { kind: 'host' }
  /** A network of its own: these hosts through yoke's proxy, these ports of this machine's loopback, nothing else. */
  | { kind: 'own'; hosts: string[]; loopback: number[] };

/** The port inside a command's sandbox where yoke's proxy listens: no loopback service may take it. */
export const COMMAND_PROXY_PORT = 8877;

const HOST_GLOB = /^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/i;

/** The lowest port an unprivileged process may listen on (Linux's ip_unprivileged_port_start): the forwarder inside a command's sandbox is one. */
const UNPRIVILEGED_PORT = 1024;

export const commandNetworkAllow = z.string().transform((s, ctx): CommandNetworkAllow => {
  const parts = commaList.parse(s);
  if (parts.length === 1 && parts[0] === 'host') return { kind: 'host' };
  const hosts: string[] = [];
  const loopback: number[] = [];
  for (const part of parts) {
    const loop = /^(?:127\.0\.0\.1|localhost):(\d{1,5})$/.exec(part);
    const port = loop ? Number(loop[1]) : NaN;
    if (loop && port >= UNPRIVILEGED_PORT && port <= 65535 && port !== COMMAND_PROXY_PORT) loopback.push(port);
    else if (!loop && HOST_GLOB.test(part) && !/^[\d.]+$/.test(part) && part.toLowerCase() !== 'localhost')
      hosts.push(part.toLowerCase());
    else {
      ctx.addIssue({
        code: 'custom',
        message:
          part === 'host'
            ? '"host" (the machine\'s own network) stands alone, with no other entry'
            : loop && port === COMMAND_PROXY_PORT
              ? `port ${COMMAND_PROXY_PORT} is where yoke's proxy listens inside a command's sandbox: serve that service on another port`
              : loop && port >= 1 && port < UNPRIVILEGED_PORT
                ? `"${part}": a command's sandbox runs unprivileged and cannot listen below port ${UNPRIVILEGED_PORT} to forward it; serve that service on port ${UNPRIVILEGED_PORT} or above (127.0.0.1:8080)`
                : `"${part}" is not a host name (registry.npmjs.org), a subdomain glob (*.example.com), a loopback port (127.0.0.1:3000) or "host"`,
      });
      return z.NEVER;
    }
  }
  return { kind: 'own', hosts, loopback };
});

export const dollars = (example: string) =>
  z.coerce
    .number({ message: `must be a number of US dollars, e.g. ${example}` })
    .positive(`must be a positive number of US dollars, e.g. ${example}`);

export const repoCaps = z.string().transform((s, ctx) => {
  const caps: Record<string, number> = {};
  for (const part of commaList.parse(s)) {
    const match = /^([\w.-]+\/[\w.-]+)=(\d+)$/.exec(part);
    if (!match || Number(match[2]) < 1) {
      ctx.addIssue({
        code: 'custom',
        message: `"${part}" is not owner/repo=N with N at least 1 (example: YOKE_REPO_CAPS=acme/api=3,acme/web=1)`,
      });
      return z.NEVER;
    }
    caps[match[1]!.toLowerCase()] = Number(match[2]);
  }
  return caps;
});

export const personTokens = z.string().transform((s, ctx) => {
  const people: { login: string; token: string }[] = [];
  for (const part of commaList.parse(s)) {
    const m = /^([A-Za-z0-9](?:[A-Za-z0-9-]{0,38})):(.+)$/.exec(part);
    if (!m) {
      ctx.addIssue({
        code: 'custom',
        message: `an entry is not login:token (example: YOKE_PERSON_TOKENS=alice:$(openssl rand -hex 32))`,
      });
      return z.NEVER;
    }
    if (m[2]!.length < SECRET_MIN_LENGTH) {
      ctx.addIssue({
        code: 'custom',
        message: `${m[1]}'s token must be at least ${SECRET_MIN_LENGTH} characters; make one with \`openssl rand -hex 32\``,
      });
      return z.NEVER;
    }
    people.push({ login: m[1]!, token: m[2]! });
  }
  return people;
});

// TR17: run secrets, OIDC tokens and push tokens travel over it, so plain http only on this machine.
export const publicUrl = z
  .url({ message: 'must be a URL such as https://yoke.example.com' })
  .refine(
    (u) =>
      !URL.canParse(u) ||
      new URL(u).protocol === 'https:' ||
      (new URL(u).protocol === 'http:' && isLoopbackHost(new URL(u).hostname)),
    {
      message:
        'must be https (run secrets, OIDC tokens and push tokens travel over it); plain http is allowed only for loopback (localhost, 127.0.0.1, [::1]). Put yoke behind a TLS endpoint and set YOKE_PUBLIC_URL=https://…',
    },
  );

/** One variable: how it is parsed, its default as an operator would write it, what it means. */
