import { z } from 'zod';

// The CLI's side of yoke's HTTP API: one call with the operator token, and
// the failure a person reads (the refusal's message, then its recovery).

const ApiError = z.object({ error: z.object({ code: z.string(), message: z.string(), recovery: z.string() }) });

export interface ExecResult {
  code: number | null;
  output: string;
  error?: string;
}

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
  env: Record<string, string | undefined>;
  fetch: typeof fetch;
  /** Runs a shell command in the current directory with more environment (QA cases, deploy stages). */
  exec?: (command: string, env: Record<string, string>) => Promise<ExecResult>;
  /** The commit checked out in the current directory, or null outside a git checkout. */
  head?: () => string | null;
  readFile?: (path: string) => string;
}

export class CliFailure extends Error {}

export interface GlobalOptions {
  url?: string;
  token?: string;
}

export async function call(io: CliIo, opts: GlobalOptions, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<unknown> {
  const url = (opts.url ?? io.env.YOKE_URL ?? 'http://localhost:3000').replace(/\/$/, '');
  const token = opts.token ?? io.env.YOKE_TOKEN;
  if (!token) throw new CliFailure('No yoke token. Set YOKE_TOKEN (an operator token from the server\'s YOKE_API_TOKENS, or your own from YOKE_PERSON_TOKENS) or pass --token.');
  let res: Response;
  try {
    res = await io.fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new CliFailure(`yoke at ${url} did not answer (${err instanceof Error ? err.message : err}). Check YOKE_URL or --url.`);
  }
  const json: unknown = await res.json().catch(() => null);
  if (!res.ok) {
    const parsed = ApiError.safeParse(json);
    throw new CliFailure(parsed.success ? `${parsed.data.error.message}\nTo recover: ${parsed.data.error.recovery}` : `yoke answered ${res.status}`);
  }
  return json;
}
