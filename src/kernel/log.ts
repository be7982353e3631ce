import { recordOf } from './guards.js';
import { getTransformStream } from '@probot/pino';
import pino, { type DestinationStream, type Logger } from 'pino';

// The slice of a logger yoke's modules take (Log), and the process logger Probot is given.

/** The slice of a pino logger yoke uses, so tests can pass a silent one. */
export interface Log {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLog: Log = { info: () => {}, warn: () => {}, error: () => {} };

// The process logger Probot is given. TR07: secrets never reach the log:
// authorization headers, cookies and webhook signatures are redacted, and a
// token in a URL's query (`?token=`, `access_token=`, `code=`) is scrubbed
// from messages and logged URLs alike.

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-hub-signature"]',
  'req.headers["x-hub-signature-256"]',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'request.headers.authorization',
  'err.request.headers.authorization',
  'err.headers.authorization',
];

const TOKEN_PARAM = /([?&](?:token|access_token|code|secret)=)[^&\s"']+/gi;
const BEARER = /\b(Bearer|token)\s+[\w.~+/-]{16,}=*/g;

/** A string with every token it carries replaced. */
export function scrubSecrets(text: string): string {
  return text.replace(TOKEN_PARAM, '$1[redacted]').replace(BEARER, '$1 [redacted]');
}

function scrubDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrubSecrets(value);
  if (depth > 4 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => scrubDeep(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = scrubDeep(v, depth + 1);
  return out;
}

export interface LoggerOptions {
  level?: string;
  logFormat?: 'json' | 'pretty';
  /** Where lines go; standard output through Probot's formatter when omitted. */
  destination?: DestinationStream;
}

export function yokeLoggerOptions(level = 'info'): pino.LoggerOptions {
  return {
    level,
    name: 'probot',
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    formatters: { log: (object) => recordOf(scrubDeep(object)) ?? {} },
    hooks: {
      logMethod(args, method) {
        method.apply(this, args.map((a) => (typeof a === 'string' ? scrubSecrets(a) : a)) as Parameters<typeof method>);
      },
    },
  };
}

export async function createLogger(opts: LoggerOptions = {}): Promise<Logger> {
  if (opts.destination) return pino(yokeLoggerOptions(opts.level), opts.destination);
  const transform = await getTransformStream({ logFormat: opts.logFormat });
  transform.pipe(pino.destination(1) as unknown as NodeJS.WritableStream);
  return pino(yokeLoggerOptions(opts.level), transform);
}
