import type { z } from 'zod';
import { OperatorEnv } from './settings-table.js';
import { COMMAND_PROXY_PORT, loopbackPort, type CommandNetworkAllow } from './setting-parsers.js';

// Operator settings: the environment parsed (its variables are declared once,
// in settings-table.ts) and turned into what the rest of yoke reads. Probot
// reads its own variables (APP_ID, PRIVATE_KEY, WEBHOOK_SECRET, GHE_HOST, ...)
// too; all are checked at start.

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
  /** What a command-launcher run may reach on the network besides the yoke API it reports to. */
  commandNetwork: CommandNetworkAllow;
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
  /** The app's id (APP_ID): the source `yoke doctor` expects the branch's rules to require yoke/lander from; null when unset. */
  appId: number | null;
  /** BU01: the fleet's daily and monthly budgets in USD (null: none), and the share of each new work may take. */
  dailyUsd: number | null;
  monthlyUsd: number | null;
  newWorkShare: number;
  /** Where people read GitHub: links to issues, PRs and workflow runs start here. */
  webUrl: string;
  /** How often an open dashboard page fetches itself again. */
  dashboardRefreshMs: number;
  /** A bearer token that may read the metrics (and nothing else). */
  metricsToken: string | undefined;
  /** A second listener that serves only the metrics, with no token. */
  metricsAddress: { host: string; port: number } | undefined;
  /** Where spans go over OTLP/HTTP, with what headers (null: tracing off), and the service they name. */
  otlpTraces: { url: string; headers: Record<string, string> } | null;
  serviceName: string;
}

export type EnvResult = { ok: true; settings: OperatorSettings } | { ok: false; problems: string[] };

/** Settings that are each valid alone but cannot work together for the command launcher, named with the fix. */
function launcherProblem(e: z.infer<typeof OperatorEnv>, publicUrl: string): string | null {
  if (e.YOKE_LAUNCHER !== 'command') return null;
  if (!e.YOKE_COMMAND)
    return 'YOKE_COMMAND: the command launcher needs the command to start, e.g. YOKE_COMMAND="node agent.js"';
  // TR06: a command run reaches the yoke it reports to through a forward on the same port inside its sandbox,
  // where the proxy holds 8877: that forward could not be made.
  if (e.YOKE_COMMAND_NETWORK_ALLOW.kind === 'own' && loopbackPort(publicUrl) === COMMAND_PROXY_PORT)
    return `YOKE_PUBLIC_URL: ${publicUrl} is on port ${COMMAND_PROXY_PORT}, where yoke's proxy listens inside a command's sandbox, so a run could not reach yoke: serve yoke on another port (PORT, or YOKE_PUBLIC_URL)`;
  return null;
}

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
  const publicUrl = (e.YOKE_PUBLIC_URL ?? `http://localhost:${e.PORT}`).replace(/\/$/, '');
  const problem = launcherProblem(e, publicUrl);
  if (problem) return { ok: false, problems: [problem] };
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
      commandNetwork: e.YOKE_COMMAND_NETWORK_ALLOW,
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
      appId: e.APP_ID !== undefined && /^[1-9]\d*$/.test(e.APP_ID) ? Number(e.APP_ID) : null,
      dailyUsd: e.YOKE_DAILY_USD ?? null,
      monthlyUsd: e.YOKE_MONTHLY_USD ?? null,
      newWorkShare: e.YOKE_NEW_WORK_SHARE,
      dashboardRefreshMs: e.YOKE_DASHBOARD_REFRESH_SECONDS * 1000,
      metricsToken: e.YOKE_METRICS_TOKEN,
      metricsAddress: e.YOKE_METRICS_ADDRESS,
      otlpTraces:
        e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || e.OTEL_EXPORTER_OTLP_ENDPOINT
          ? {
              url:
                e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
                `${e.OTEL_EXPORTER_OTLP_ENDPOINT!.replace(/\/+$/, '')}/v1/traces`,
              headers: e.OTEL_EXPORTER_OTLP_HEADERS,
            }
          : null,
      serviceName: e.OTEL_SERVICE_NAME,
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
