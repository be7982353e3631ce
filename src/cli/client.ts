import { unreachableCode } from '../kernel/error-text.js';
import type { Door } from '../door.js';
import type { z } from 'zod';
import { issuesText } from '../kernel/issues-text.js';
import { ApiError } from '../http/api/answers.js';
import { routePath, type RouteDef } from '../http/api/routes.js';

// The CLI's side of yoke's HTTP API: one call of a route declared in
// http/api/routes.ts with the caller's token, its answer parsed by the route's
// schema, and the failure a person reads (the refusal's message, then its
// recovery).

export interface ExecResult {
  code: number | null;
  output: string;
  error?: string;
}

export interface ExecOptions {
  /** More files a command must not reach (the database door's store and key), besides those the environment names. */
  hide?: readonly string[];
}

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  env: Record<string, string | undefined>;
  fetch: typeof fetch;
  /** Runs a shell command in the current directory with more environment (QA cases, deploy stages). */
  exec?: (command: string, env: Record<string, string>, opts?: ExecOptions) => Promise<ExecResult>;
  /** The commit checked out in the current directory, or null outside a git checkout. */
  head?: () => string | null;
  readFile?: (path: string) => string;
  /** `yoke watch deploy`: how long it waits, and its schedules (tests give their own). */
  sleep?: (ms: number) => Promise<void>;
  driverPolicy?: DriverPolicy;
  /** Opens the database door (tests give their own). */
  openDoor?: (env: Record<string, string | undefined>, path: string) => Promise<Door>;
}

export interface DriverPolicy {
  /** DX12: the delay before each busy retry: 15, 30, then 60 seconds, six retries in all. */
  busyDelaysMs: readonly number[];
  /** DX08: how many result waits recover a lost answer, and how long each asks for. */
  resultWaits: number;
  resultWaitSeconds: number;
  leaseSeconds: number;
  /** TR12: how long a capture's plan execution lives without a renewal (renewed before each case). */
  executionLeaseSeconds: number;
  /** Between gate checks of a QA stage that is still waiting. */
  gatePollMs: number;
}

export const DEFAULT_DRIVER_POLICY: DriverPolicy = {
  busyDelaysMs: [15_000, 30_000, 60_000, 60_000, 60_000, 60_000],
  resultWaits: 10,
  resultWaitSeconds: 60,
  leaseSeconds: 120,
  executionLeaseSeconds: 120,
  gatePollMs: 15_000,
};

export class CliFailure extends Error {}

export interface GlobalOptions {
  url?: string;
  token?: string;
}

/** yoke's base URL from --url or YOKE_URL, checked before any request: a scheme, and no path of yoke's own. */
export function baseUrl(io: CliIo, opts: GlobalOptions): string {
  const given = opts.url ?? io.env.YOKE_URL;
  const source = opts.url !== undefined ? '--url' : 'YOKE_URL';
  const raw = (given ?? 'http://localhost:3000').trim().replace(/\/+$/, '');
  if (!/^https?:\/\//i.test(raw))
    throw new CliFailure(
      `${source} must start with http:// or https://: "${raw}" has neither. Set it to http://${raw}, say.`,
    );
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new CliFailure(`${source} is not a URL: "${raw}". Set it to yoke's base URL, e.g. http://localhost:3000.`);
  }
  if (/\/yoke(\/|$)/.test(parsed.pathname))
    throw new CliFailure(
      `${source} is yoke's base URL, without /yoke: set it to ${raw.replace(/\/yoke(\/.*)?$/, '')}.`,
    );
  return raw;
}

/** An argument checked before any request, named in the refusal: `owner/repo`. */
export function repoArg(name: string): string {
  if (!/^[\w.-]+\/[\w.-]+$/.test(name))
    throw new CliFailure(`<owner/repo> is "${name}", which is not owner/repo, e.g. acme/api.`);
  return name;
}

/** An issue or PR number argument: a whole number from 1. */
export function numberArg(what: string, value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new CliFailure(`<${what}> is "${value}", which is not a number: name it by its number, e.g. 12.`);
  return Number(value);
}

/** A commit argument: a SHA, 4 to 40 hexadecimal characters. */
export function commitArg(option: string, value: string): string {
  if (!/^[0-9a-f]{4,40}$/i.test(value))
    throw new CliFailure(
      `${option} is "${value}", which is not a commit SHA (4 to 40 hexadecimal characters); \`git rev-parse HEAD\` prints one.`,
    );
  return value;
}

/** A new deployment run's options as its request body says them: the commit, the items, the run it takes over, its creator. */
export function newRunOptions(
  o: { commit?: string; items?: string; supersedes?: string },
  creator: string | undefined,
): { commit?: string; items?: string[]; supersedes?: string; creator?: string } {
  return {
    ...(o.commit ? { commit: commitArg('--commit', o.commit) } : {}),
    ...(o.items
      ? {
          items: o.items
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean),
        }
      : {}),
    ...(o.supersedes ? { supersedes: o.supersedes } : {}),
    ...(creator ? { creator } : {}),
  };
}

async function call(
  io: CliIo,
  opts: GlobalOptions,
  req: { method: string; path: string; body?: unknown; headers?: Record<string, string> | undefined },
): Promise<unknown> {
  const { method, path, body, headers = {} } = req;
  const url = baseUrl(io, opts);
  const token = opts.token ?? io.env.YOKE_TOKEN;
  if (!token)
    throw new CliFailure(
      "No yoke token. Set YOKE_TOKEN (an operator token from the server's YOKE_API_TOKENS, or your own from YOKE_PERSON_TOKENS) or pass --token.",
    );
  let res: Response;
  try {
    res = await io.fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new CliFailure(notAnswered(url, urlSource(io, opts), err));
  }
  const json: unknown = await res.json().catch(() => null);
  if (!res.ok) {
    const parsed = ApiError.safeParse(json);
    // The API's advice for a missing token is HTTP's; the CLI's is where its token comes from.
    if (parsed.success && parsed.data.error.code === 'unauthorized') throw new CliFailure(tokenRefused(url));
    if (parsed.success) throw new CliFailure(`${parsed.data.error.message}\nTo recover: ${parsed.data.error.recovery}`);
    // Not an answer of yoke's: something else is listening there.
    throw new CliFailure(
      `${url} answered ${res.status} to ${method} ${path} without yoke's error body: it does not look like yoke. Check YOKE_URL or --url (yoke answers GET /yoke/api/health).`,
    );
  }
  return json;
}

/** Where the CLI's yoke URL came from, in words: a flag, the environment, or the default nobody set. */
export const urlSource = (io: Pick<CliIo, 'env'>, opts: GlobalOptions): string =>
  opts.url !== undefined ? '--url' : io.env.YOKE_URL ? 'YOKE_URL' : 'the default: YOKE_URL is not set';

/** Nothing answered at yoke's URL: which URL, where it came from, why, and how to point the CLI elsewhere. */
export function notAnswered(url: string, source: string, err: unknown): string {
  const why = unreachableCode(err) ?? (err instanceof Error ? err.message : String(err));
  return `yoke at ${url} (${source}) did not answer (${why}).\nTo recover: check that yoke is running there, or set YOKE_URL to its address (or pass --url), e.g. YOKE_URL=https://yoke.example.com.`;
}

/** The CLI's word for a token yoke did not take. */
export function tokenRefused(url: string): string {
  return `yoke at ${url} did not take this token (YOKE_TOKEN or --token): it is none of the server's YOKE_API_TOKENS or YOKE_PERSON_TOKENS.\nTo recover: set YOKE_TOKEN to one of them (ask whoever runs yoke for yours), or pass --token.`;
}

/** A JSON route, as the CLI calls it. */
export type ApiRoute = RouteDef & { answer: z.ZodType };

export interface RouteArgs<R extends ApiRoute> {
  params?: Record<string, string | number>;
  query?: Record<string, string | undefined>;
  body?: R['body'] extends z.ZodType ? z.input<R['body']> : undefined;
  headers?: Record<string, string>;
}

/** A route's path with its parameters and query filled in. */
export function routeUrl(
  def: RouteDef,
  params: Record<string, string | number> = {},
  query: Record<string, string | undefined> = {},
): string {
  const q = new URLSearchParams(Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined));
  return `${routePath(def, params)}${q.size ? `?${q}` : ''}`;
}

/** Calls a route and reads its answer by the route's schema: never `any`, and a stranger answer says so. */
export async function callRoute<R extends ApiRoute>(
  io: CliIo,
  opts: GlobalOptions,
  def: R,
  args: RouteArgs<R> = {},
): Promise<z.output<R['answer']>> {
  const path = routeUrl(def, args.params, args.query);
  const json = await call(io, opts, { method: def.method, path, body: args.body, headers: args.headers });
  const parsed = def.answer.safeParse(json);
  if (!parsed.success)
    throw new CliFailure(
      `yoke's answer to ${def.method} ${path} is not one this CLI reads (${issuesText(parsed.error, 'answer')}).\nTo recover: run a yoke CLI from the same release as the server.`,
    );
  // Checked, and handed on as sent: the answers carry no defaults or transforms, and --json keeps the server's key order.
  return json as z.output<R['answer']>;
}

/** `owner/repo` as a route's :owner and :name. */
export function repoParams(name: string): { owner: string; name: string } {
  const [owner = '', repo = ''] = repoArg(name).split('/');
  return { owner, name: repo };
}

/** The way this CLI runs a command here (QA cases, deploy commands). */
export function exec(io: CliIo) {
  if (!io.exec) throw new CliFailure('This yoke cannot run commands here.');
  return io.exec;
}

/** An exit code a command chose (the runner's, the doctor's), carried out of commander. */
export class CommandExit extends Error {
  constructor(readonly exitCode: number) {
    super(`exit ${exitCode}`);
  }
}
