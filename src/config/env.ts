import { z } from 'zod';

// Operator settings. Probot reads its own variables (APP_ID, PRIVATE_KEY,
// WEBHOOK_SECRET, GHE_HOST, ...); these are yoke's, all checked at start.

const positiveInt = (name: string) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, `${name} must be a whole number`)
    .transform(Number)
    .refine((n) => n >= 1, `${name} must be at least 1`);

/** Hosts that are this machine: a URL to one never crosses a network. */
export const isLoopbackHost = (host: string): boolean =>
  host === 'localhost' || host === '[::1]' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);

const commaList = z.string().transform((s) =>
  s
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0),
);

const repoCaps = z.string().transform((s, ctx) => {
  const caps: Record<string, number> = {};
  for (const part of s
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
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

/** TR08: the shortest webhook secret and operator token yoke accepts (`openssl rand -hex 32` makes 64 characters). */
export const SECRET_MIN_LENGTH = 32;

export const OperatorEnv = z.object({
  YOKE_DB_PATH: z.string().min(1).default('.yoke/yoke.db'),
  YOKE_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//i, {
      message:
        'YOKE_DATABASE_URL is a PostgreSQL URL (postgres://user:password@host:5432/yoke); unset it to keep the SQLite file at YOKE_DB_PATH',
    })
    .optional(),
  YOKE_GLOBAL_CAP: positiveInt('YOKE_GLOBAL_CAP').default(2),
  YOKE_REPO_CAPS: repoCaps.default({}),
  YOKE_TICK_SECONDS: positiveInt('YOKE_TICK_SECONDS').default(60),
  YOKE_REAPER_SECONDS: positiveInt('YOKE_REAPER_SECONDS').default(30),
  YOKE_PAUSE_THRESHOLD: positiveInt('YOKE_PAUSE_THRESHOLD').default(3),
  YOKE_CONFIG_REFRESH_SECONDS: positiveInt('YOKE_CONFIG_REFRESH_SECONDS').default(600),
  YOKE_LANDER_ATTEMPTS_PER_HEAD: positiveInt('YOKE_LANDER_ATTEMPTS_PER_HEAD').default(2),
  YOKE_DISPATCH_GRACE_SECONDS: positiveInt('YOKE_DISPATCH_GRACE_SECONDS').default(600),
  YOKE_IDLE_PROBE_SECONDS: positiveInt('YOKE_IDLE_PROBE_SECONDS').default(300),
  YOKE_RESPONSE_LIMIT_SECONDS: positiveInt('YOKE_RESPONSE_LIMIT_SECONDS').default(25),
  YOKE_HOSTED_CAP_SECONDS: positiveInt('YOKE_HOSTED_CAP_SECONDS').default(100),
  YOKE_ACTIVE_SECONDS: positiveInt('YOKE_ACTIVE_SECONDS').default(600),
  YOKE_MAX_REQUESTS_IN_FLIGHT: positiveInt('YOKE_MAX_REQUESTS_IN_FLIGHT')
    .refine((n) => n <= 100, "YOKE_MAX_REQUESTS_IN_FLIGHT must be at most 100, GitHub's limit on concurrent requests")
    .default(20),
  YOKE_THROTTLE: z.enum(['on', 'off'], { message: 'YOKE_THROTTLE must be "on" or "off"' }).default('on'),
  YOKE_LAUNCHER: z
    .enum(['actions', 'command'], { message: 'YOKE_LAUNCHER must be "actions" or "command"' })
    .default('actions'),
  YOKE_COMMAND: z.string().optional(),
  /** TR06: folders a command-launcher run may write besides its own working folder (everything else is read-only to it). */
  YOKE_COMMAND_WRITABLE: commaList
    .refine((paths) => paths.every((p) => p.startsWith('/')), {
      message: 'YOKE_COMMAND_WRITABLE lists absolute folders, comma-separated, e.g. /srv/yoke/work,/var/cache/npm',
    })
    .default([]),
  /** TR06 TR30: run repository code without bubblewrap (a machine that cannot make namespaces), knowing what that gives it. */
  YOKE_COMMANDS_UNCONTAINED: z
    .enum(['0', '1'], { message: 'YOKE_COMMANDS_UNCONTAINED must be 1 (run without bubblewrap) or 0' })
    .default('0'),
  /** How Actions runs reach yoke: its API at YOKE_PUBLIC_URL, or back through GitHub alone (no inbound connection). */
  YOKE_RUNS_REACH: z
    .enum(['api', 'github'], {
      message:
        'YOKE_RUNS_REACH must be "api" (runs call yoke at YOKE_PUBLIC_URL) or "github" (runs hand results back through GitHub; yoke needs no inbound connection)',
    })
    .default('api'),
  YOKE_API_TOKENS: commaList
    .refine((tokens) => tokens.every((t) => t.length >= SECRET_MIN_LENGTH), {
      message: `every operator token must be at least ${SECRET_MIN_LENGTH} characters; make one with \`openssl rand -hex 32\``,
    })
    .default([]),
  YOKE_PERSON_TOKENS: z
    .string()
    .transform((s, ctx) => {
      const people: { login: string; token: string }[] = [];
      for (const part of s
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean)) {
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
    })
    .default([]),
  // TR17: run secrets, OIDC tokens and push tokens travel over it, so plain http only on this machine.
  YOKE_PUBLIC_URL: z
    .url({ message: 'YOKE_PUBLIC_URL must be a URL such as https://yoke.example.com' })
    .refine(
      (u) =>
        !URL.canParse(u) ||
        new URL(u).protocol === 'https:' ||
        (new URL(u).protocol === 'http:' && isLoopbackHost(new URL(u).hostname)),
      {
        message:
          'YOKE_PUBLIC_URL must be https (run secrets, OIDC tokens and push tokens travel over it); plain http is allowed only for loopback (localhost, 127.0.0.1, [::1]). Put yoke behind a TLS endpoint and set YOKE_PUBLIC_URL=https://…',
      },
    )
    .optional(),
  YOKE_OIDC_ISSUER: z.url().default('https://token.actions.githubusercontent.com'),
  YOKE_OIDC_JWKS_URL: z.url().optional(),
  YOKE_TRUSTED_MARKER_LOGINS: commaList.default([]),
  YOKE_BOT_LOGIN: z.string().optional(),
  YOKE_DASHBOARD_REFRESH_SECONDS: positiveInt('YOKE_DASHBOARD_REFRESH_SECONDS').default(10),
  YOKE_DAILY_USD: z.coerce
    .number({ message: 'YOKE_DAILY_USD must be a number of US dollars, e.g. 100' })
    .positive('YOKE_DAILY_USD must be a positive number of US dollars, e.g. 100')
    .optional(),
  YOKE_MONTHLY_USD: z.coerce
    .number({ message: 'YOKE_MONTHLY_USD must be a number of US dollars, e.g. 2000' })
    .positive('YOKE_MONTHLY_USD must be a positive number of US dollars, e.g. 2000')
    .optional(),
  YOKE_NEW_WORK_SHARE: z.coerce
    .number({ message: 'YOKE_NEW_WORK_SHARE must be a fraction, e.g. 0.8' })
    .gt(0, 'YOKE_NEW_WORK_SHARE must be above 0 and at most 1, e.g. 0.8')
    .max(1, 'YOKE_NEW_WORK_SHARE must be above 0 and at most 1, e.g. 0.8')
    .default(1),
  PORT: positiveInt('PORT').default(3000),
  // Probot's own: the app's id, which names yoke to runs that reach it through GitHub when YOKE_PUBLIC_URL is unset.
  APP_ID: z.string().optional(),
  // Probot's own: where GitHub Enterprise Server (or the sandbox's forge) lives. yoke links to its pages.
  GHE_HOST: z.string().optional(),
  GHE_PROTOCOL: z.enum(['http', 'https'], { message: 'GHE_PROTOCOL must be "http" or "https"' }).default('https'),
});
export type OperatorEnv = z.infer<typeof OperatorEnv>;

export interface OperatorSettings {
  dbPath: string;
  /** Where the store is: YOKE_DATABASE_URL (PostgreSQL) when set, else the SQLite file at dbPath. */
  database: string;
  globalCap: number;
  repoCaps: Record<string, number>;
  tickMs: number;
  reaperMs: number;
  pauseThreshold: number;
  configRefreshMs: number;
  landerAttemptsPerHead: number;
  dispatchGraceMs: number;
  /** Octokit's request throttling (GitHub's one-write-a-second guidance); off only for a server without secondary limits. */
  throttle: boolean;
  /** SC02: how often an idle repository is probed; an active one is probed every pass. */
  idleProbeMs: number;
  /** DX08: a dispatch answers 202 with its reservation past this. */
  responseLimitMs: number;
  /** DX08: the longest a single HTTPS answer may take where yoke is hosted; every result wait stays within it. */
  hostedCapMs: number;
  /** SC02: how long a webhook, command or kick keeps a repository active. */
  activeWindowMs: number;
  /** SC01: how many GitHub requests (and so repository reads) may be in flight at once. */
  maxRequestsInFlight: number;
  launcher: 'actions' | 'command';
  /** How Actions runs reach yoke: `api` (they call YOKE_PUBLIC_URL) or `github` (artifacts yoke reads; the runner published into the repository). */
  runsReach: 'api' | 'github';
  command: string | undefined;
  /** Folders a command-launcher run may write besides its own working folder. */
  commandWritable: string[];
  /** Runs and repository commands start without bubblewrap (the operator said so). */
  commandsUncontained: boolean;
  apiTokens: string[];
  /** Token role "person": each token is one GitHub login; what it may do is what GitHub says that login may do. */
  personTokens: { login: string; token: string }[];
  publicUrl: string;
  /**
   * The audience runs ask their OIDC tokens for (the `api_url` input), when it
   * is not the public URL: runs that reach yoke through GitHub with no
   * YOKE_PUBLIC_URL set name the app (`yoke-app-<APP_ID>`), which no run can call.
   */
  runsAudience?: string;
  oidcIssuer: string;
  oidcJwksUrl: string;
  trustedMarkerLogins: string[];
  botLogin: string | undefined;
  /** BU01: the fleet's daily and monthly budgets in USD (null: none), and the share of each new work may take. */
  dailyUsd: number | null;
  monthlyUsd: number | null;
  newWorkShare: number;
  /** Where people read GitHub: links to issues, PRs and workflow runs start here. */
  webUrl: string;
  /** How often an open dashboard page fetches itself again. */
  dashboardRefreshMs: number;
}

export type EnvResult = { ok: true; settings: OperatorSettings } | { ok: false; problems: string[] };

/** Parses yoke's environment; every bad value is named with its fix. */
export function parseOperatorEnv(env: Record<string, string | undefined>): EnvResult {
  const picked: Record<string, string> = {};
  for (const key of Object.keys(OperatorEnv.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') picked[key] = value;
  }
  const parsed = OperatorEnv.safeParse(picked);
  if (!parsed.success) {
    return {
      ok: false,
      problems: parsed.error.issues.map((issue) => `${issue.path.join('.') || 'environment'}: ${issue.message}`),
    };
  }
  const e = parsed.data;
  if (e.YOKE_LAUNCHER === 'command' && !e.YOKE_COMMAND) {
    return {
      ok: false,
      problems: ['YOKE_COMMAND: the command launcher needs the command to start, e.g. YOKE_COMMAND="node agent.js"'],
    };
  }
  const publicUrl = (e.YOKE_PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/$/, '');
  const issuer = e.YOKE_OIDC_ISSUER.replace(/\/$/, '');
  return {
    ok: true,
    settings: {
      dbPath: e.YOKE_DB_PATH,
      database: e.YOKE_DATABASE_URL ?? e.YOKE_DB_PATH,
      globalCap: e.YOKE_GLOBAL_CAP,
      repoCaps: e.YOKE_REPO_CAPS,
      tickMs: e.YOKE_TICK_SECONDS * 1000,
      reaperMs: e.YOKE_REAPER_SECONDS * 1000,
      pauseThreshold: e.YOKE_PAUSE_THRESHOLD,
      configRefreshMs: e.YOKE_CONFIG_REFRESH_SECONDS * 1000,
      landerAttemptsPerHead: e.YOKE_LANDER_ATTEMPTS_PER_HEAD,
      dispatchGraceMs: e.YOKE_DISPATCH_GRACE_SECONDS * 1000,
      throttle: e.YOKE_THROTTLE === 'on',
      maxRequestsInFlight: e.YOKE_MAX_REQUESTS_IN_FLIGHT,
      idleProbeMs: e.YOKE_IDLE_PROBE_SECONDS * 1000,
      responseLimitMs: e.YOKE_RESPONSE_LIMIT_SECONDS * 1000,
      hostedCapMs: e.YOKE_HOSTED_CAP_SECONDS * 1000,
      activeWindowMs: e.YOKE_ACTIVE_SECONDS * 1000,
      launcher: e.YOKE_LAUNCHER,
      runsReach: e.YOKE_RUNS_REACH,
      command: e.YOKE_COMMAND,
      commandWritable: e.YOKE_COMMAND_WRITABLE,
      commandsUncontained: e.YOKE_COMMANDS_UNCONTAINED === '1',
      apiTokens: e.YOKE_API_TOKENS,
      personTokens: e.YOKE_PERSON_TOKENS,
      publicUrl,
      ...(e.YOKE_LAUNCHER === 'actions' && e.YOKE_RUNS_REACH === 'github' && !e.YOKE_PUBLIC_URL
        ? { runsAudience: `yoke-app-${e.APP_ID ?? 'unset'}` }
        : {}),
      oidcIssuer: issuer,
      oidcJwksUrl: e.YOKE_OIDC_JWKS_URL ?? `${issuer}/.well-known/jwks`,
      trustedMarkerLogins: e.YOKE_TRUSTED_MARKER_LOGINS.map((l) => l.toLowerCase()),
      botLogin: e.YOKE_BOT_LOGIN,
      dailyUsd: e.YOKE_DAILY_USD ?? null,
      monthlyUsd: e.YOKE_MONTHLY_USD ?? null,
      newWorkShare: e.YOKE_NEW_WORK_SHARE,
      dashboardRefreshMs: e.YOKE_DASHBOARD_REFRESH_SECONDS * 1000,
      webUrl: e.GHE_HOST ? `${e.GHE_PROTOCOL}://${e.GHE_HOST}` : 'https://github.com',
    },
  };
}

/** The embedded defaults with some settings changed (tests, the bench, the sandbox). */
export function settingsWith(over: Partial<OperatorSettings>): OperatorSettings {
  const base = parseOperatorEnv({});
  if (!base.ok) throw new Error(base.problems.join('; '));
  return { ...base.settings, ...over };
}

/** The audience runs ask their OIDC tokens for, and the `api_url` they are told: the public URL unless it names the app. */
export const runsAudienceOf = (s: Pick<OperatorSettings, 'runsAudience' | 'publicUrl'>): string =>
  s.runsAudience ?? s.publicUrl;
