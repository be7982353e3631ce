import { fieldOf } from '../../kernel/guards.js';
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { credentialOf } from './credentials.js';

// TR07: the dashboard signs in with a form and keeps an HttpOnly,
// SameSite=Strict session cookie, so no token ever sits in a URL (where
// proxies, history and Referer headers would keep it).

export const SESSION_COOKIE = 'yoke_session';

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** Constant-time check of a presented token against the operator tokens (TR11's operator role). */
export function isOperatorToken(token: string | null | undefined, tokens: readonly string[]): boolean {
  return credentialOf(token, { operator: tokens, people: [] })?.role === 'operator';
}

export function cookieOf(req: IncomingMessage, name: string): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return decodeURIComponent(v.join('='));
  }
  return null;
}

export interface SessionPolicy {
  ttlMs: number;
  /** Send the cookie only over HTTPS (when yoke's public URL is https); a request that came over HTTPS gets it so too. */
  secure: boolean;
}

/** TR07: whether a request reached yoke over HTTPS: its own TLS, or a proxy in front that says so. */
export const cameOverHttps = (req: IncomingMessage): boolean =>
  fieldOf(req.socket, 'encrypted') === true ||
  String(req.headers['x-forwarded-proto'] ?? '')
    .split(',')[0]!
    .trim()
    .toLowerCase() === 'https';

/** Who a dashboard session is: an operator, or a person by their GitHub login (TR11). */
export type SessionWho = { role: 'operator' } | { role: 'person'; login: string };

export class Sessions {
  private live = new Map<string, { until: number; who: SessionWho }>();

  constructor(
    private readonly policy: SessionPolicy,
    private readonly now: () => number,
  ) {}

  /** A new session: its id, and the Set-Cookie header that carries it (Secure when yoke is https, or the request was). */
  open(who: SessionWho, req?: IncomingMessage): { id: string; cookie: string } {
    const id = randomBytes(32).toString('base64url');
    this.live.set(digest(id).toString('hex'), { until: this.now() + this.policy.ttlMs, who });
    return { id, cookie: this.cookie(id, Math.floor(this.policy.ttlMs / 1000), req) };
  }

  /** Who the request's session is, or null without a live one. */
  who(req: IncomingMessage): SessionWho | null {
    const id = cookieOf(req, SESSION_COOKIE);
    if (!id) return null;
    const key = digest(id).toString('hex');
    const s = this.live.get(key);
    if (s === undefined) return null;
    if (s.until <= this.now()) {
      this.live.delete(key);
      return null;
    }
    return s.who;
  }

  valid(req: IncomingMessage): boolean {
    return this.who(req) !== null;
  }

  close(req: IncomingMessage): string {
    const id = cookieOf(req, SESSION_COOKIE);
    if (id) this.live.delete(digest(id).toString('hex'));
    return this.cookie('', 0, req);
  }

  private cookie(value: string, maxAgeS: number, req?: IncomingMessage): string {
    const secure = this.policy.secure || (req !== undefined && cameOverHttps(req));
    return `${SESSION_COOKIE}=${value}; Path=/yoke; HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}${secure ? '; Secure' : ''}`;
  }
}
