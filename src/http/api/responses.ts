import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import { makeRefusal, type Refusal } from '../../kernel/codes/table.js';
import { issuesText } from '../../kernel/issues-text.js';
import { Refused, refusalJson } from '../../kernel/result.js';

// How yoke's HTTP server reads a request and writes an answer: JSON with its
// refusal shape ({"error":{code,message,recovery}}), pages under their
// content policy, bodies read within their limit, the bearer token.

export const BODY_LIMIT = 64 * 1024;

/** TR07: nothing yoke serves leaks its URL to the sites it links to. */
export const NO_REFERRER = { 'referrer-policy': 'no-referrer' };

export function send(res: ServerResponse, status: number, body: unknown): true {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    ...NO_REFERRER,
  });
  res.end(JSON.stringify(body));
  return true;
}

/** A body exactly as recorded (a replayed gate check answers byte for byte). */
export function sendRecorded(res: ServerResponse, status: number, recorded: string): true {
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    ...NO_REFERRER,
  });
  res.end(recorded);
  return true;
}

export const sendRefusal = (res: ServerResponse, r: Refusal): true => send(res, r.status, refusalJson(r));

/** The answer to a request that failed inside yoke: nothing of the failure, which is in the log. */
export const sendInternalError = (res: ServerResponse): true =>
  send(res, 500, {
    error: {
      code: 'internal_error',
      message: 'yoke could not complete the request.',
      recovery: 'Retry; if it persists, see the yoke log.',
    },
  });

export const invalid = (error: z.ZodError, hint: string | undefined): Refusal =>
  makeRefusal('validation_failed', {
    detail: hint ?? issuesText(error, 'body'),
  });

export async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += bytes.length;
    if (size > BODY_LIMIT) throw new Refused(makeRefusal('body_too_large', { limit: BODY_LIMIT }));
    chunks.push(bytes);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function readJson(req: IncomingMessage): Promise<unknown> {
  const text = await readText(req);
  if (!text.trim()) return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new Refused(makeRefusal('validation_failed', { detail: 'the body is not JSON' }));
  }
}

export function bearerOf(req: IncomingMessage): string | null {
  const h = req.headers.authorization;
  const m = h ? /^Bearer\s+(.+)$/i.exec(h) : null;
  return m ? m[1]!.trim() : null;
}

/** The dashboard runs only its own script, loads nothing from elsewhere, and cannot be framed. */
const PAGE_POLICY =
  "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

export function html(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): true {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    'content-security-policy': PAGE_POLICY,
    ...NO_REFERRER,
    ...headers,
  });
  res.end(body);
  return true;
}

/** A script yoke serves (the dashboard's, the runner), fetched again each time it is used. */
export function script(res: ServerResponse, code: string, headers: Record<string, string> = {}): true {
  res.writeHead(200, {
    'content-type': 'text/javascript; charset=utf-8',
    'cache-control': 'no-cache',
    ...NO_REFERRER,
    ...headers,
  });
  res.end(code);
  return true;
}

export function redirect(
  res: ServerResponse,
  status: 302 | 303,
  location: string,
  headers: Record<string, string> = {},
): true {
  res.writeHead(status, { location, ...NO_REFERRER, ...headers });
  res.end();
  return true;
}
