import { z } from 'zod';
import { entriesOf } from '../kernel/guards.js';
import {
  commaList,
  commandNetworkAllow,
  dollars,
  personTokens,
  positiveInt,
  publicUrl,
  repoCaps,
  SECRET_MIN_LENGTH,
} from './setting-parsers.js';

// Every environment variable yoke reads at start, declared once: its parser,
// its default (as the text an operator would write) and its meaning. The
// environment's schema, the settings table in docs/hosting.md and
// `yoke config settings` are all derived from this table (test/docs.test.ts
// keeps the doc equal to it). A parser's messages never repeat the variable's
// name: each problem is printed as `NAME: message`.

export { SECRET_MIN_LENGTH, isLoopbackHost } from './setting-parsers.js';

interface Setting<S extends z.ZodType> {
  schema: S;
  /** The default, as text the schema parses; none: unset means "not given". */
  default?: string;
  /** The default as the docs show it, when it is worked out from other settings (markdown). */
  shown?: string;
  /** One line: what it is for (markdown). */
  meaning: string;
  /** Probot reads it too (or only): documented with Probot's, not in yoke's table. */
  probot?: true;
}

export const SETTINGS = {
  YOKE_DB_PATH: { schema: z.string().min(1), default: '.yoke/yoke.db', meaning: 'the SQLite file (WAL)' },
  YOKE_DATABASE_URL: {
    schema: z.string().regex(/^postgres(ql)?:\/\//i, {
      message:
        'must be a PostgreSQL URL (postgres://user:password@host:5432/yoke); unset it to keep the SQLite file at YOKE_DB_PATH',
    }),
    meaning:
      'a PostgreSQL store instead, `postgres://user:password@host:5432/yoke`: several yokes may share it (see "Running two yokes"); `?connect_timeout=N` bounds the wait for a connection to N seconds, as libpq reads it (10 s without it)',
  },
  YOKE_GLOBAL_CAP: { schema: positiveInt, default: '2', meaning: 'live runs, fleet-wide' },
  YOKE_REPO_CAPS: { schema: repoCaps, default: '', meaning: 'per-repo overrides, `owner/repo=N,…`' },
  YOKE_TICK_SECONDS: { schema: positiveInt, default: '60', meaning: 'the scheduler tick' },
  YOKE_REAPER_SECONDS: { schema: positiveInt, default: '30', meaning: 'the reaper tick' },
  YOKE_PAUSE_THRESHOLD: { schema: positiveInt, default: '3', meaning: 'AFK failures that pause a repository' },
  YOKE_CONFIG_REFRESH_SECONDS: {
    schema: positiveInt,
    default: '600',
    meaning: 'how long an opt-in file is trusted before it is read again',
  },
  YOKE_LANDER_ATTEMPTS_PER_HEAD: {
    schema: positiveInt,
    default: '2',
    meaning: 'landers launched for one head before yoke waits for `/yoke land`',
  },
  YOKE_DISPATCH_GRACE_SECONDS: {
    schema: positiveInt,
    default: '600',
    meaning: 'how long a dispatched workflow may go unseen before the run counts as never started',
  },
  YOKE_MAX_REQUESTS_IN_FLIGHT: {
    schema: positiveInt.refine(
      (n) => n <= 100,
      "must be at most 100, GitHub's limit on one installation's concurrent requests",
    ),
    default: '20',
    meaning:
      "GitHub requests in flight at once for each installation (GitHub allows 100 a token); a pass reads this many of an installation's repositories at once, every installation together",
  },
  YOKE_IDLE_PROBE_SECONDS: {
    schema: positiveInt,
    default: '300',
    meaning:
      "how often an idle repository is probed, and an installation's repositories listed; between, yoke uses what it last read",
  },
  YOKE_ACTIVE_SECONDS: {
    schema: positiveInt,
    default: '600',
    meaning: 'how long a webhook, a command or a kick keeps a repository active (probed every pass)',
  },
  YOKE_RESPONSE_LIMIT_SECONDS: {
    schema: positiveInt,
    default: '25',
    meaning: 'a dispatch still working after this answers 202 with its reservation, to be waited on (DX08)',
  },
  YOKE_HOSTED_CAP_SECONDS: {
    schema: positiveInt,
    default: '100',
    meaning: 'the longest one HTTPS answer may take where yoke is hosted; every result wait stays within it',
  },
  YOKE_THROTTLE: {
    schema: z.enum(['on', 'off'], { message: 'must be "on" or "off"' }),
    default: 'on',
    meaning:
      "Octokit's request throttling (one write a second, as GitHub asks); `off` only for a server without secondary rate limits",
  },
  YOKE_LAUNCHER: {
    schema: z.enum(['actions', 'command'], { message: 'must be "actions" or "command"' }),
    default: 'actions',
    meaning: '`actions` or `command`',
  },
  YOKE_COMMAND: { schema: z.string(), meaning: 'the command the `command` launcher starts' },
  /** TR06: folders a command-launcher run may write besides its own working folder (everything else is read-only to it). */
  YOKE_COMMAND_WRITABLE: {
    schema: commaList.refine((paths) => paths.every((p) => p.startsWith('/')), {
      message: 'lists absolute folders, comma-separated, e.g. /srv/yoke/work,/var/cache/npm',
    }),
    default: '',
    meaning:
      "absolute folders, comma-separated, that `command`-launcher runs and the CLI's QA and deploy commands may write besides their own folder and a scratch `/tmp` (everything else is read-only to them)",
  },
  /** TR06 TR30: what command-launcher runs and the CLI's QA and deploy commands may reach on the network. */
  YOKE_COMMAND_NETWORK_ALLOW: {
    schema: commandNetworkAllow,
    default: '',
    meaning:
      "what `command`-launcher runs and the CLI's QA and deploy commands may reach on the network, comma-separated: host names and `*.` globs (through yoke's proxy, for programs that honour `HTTPS_PROXY`), and this machine's loopback ports of 1024 or above (`127.0.0.1:3000`); a run also reaches the yoke API it reports to. Nothing else, cloud metadata and other loopback services included; `host` keeps the machine's whole network",
  },
  /** TR06 TR30: run repository code without bubblewrap (a machine that cannot make namespaces), knowing what that gives it. */
  YOKE_COMMANDS_UNCONTAINED: {
    schema: z.enum(['0', '1'], { message: 'must be 1 (run without bubblewrap) or 0' }),
    default: '0',
    meaning:
      "`1` runs command-launcher runs and QA and deploy commands without bubblewrap, as yoke's user, seeing all it sees; only for a machine that cannot make namespaces",
  },
  YOKE_API_TOKENS: {
    schema: commaList.refine((tokens) => tokens.every((t) => t.length >= SECRET_MIN_LENGTH), {
      message: `every operator token must be at least ${SECRET_MIN_LENGTH} characters; make one with \`openssl rand -hex 32\``,
    }),
    default: '',
    meaning: `operator bearer tokens, comma-separated, each at least ${SECRET_MIN_LENGTH} characters`,
  },
  YOKE_PERSON_TOKENS: {
    schema: personTokens,
    default: '',
    meaning: `person tokens, \`login:token\` comma-separated, each token at least ${SECRET_MIN_LENGTH} characters; the CLI takes one as \`YOKE_TOKEN\``,
  },
  /** How Actions runs reach yoke: its API at YOKE_PUBLIC_URL, or back through GitHub alone (no inbound connection). */
  YOKE_RUNS_REACH: {
    schema: z.enum(['api', 'github'], {
      message:
        'must be "api" (runs call yoke at YOKE_PUBLIC_URL) or "github" (runs hand results back through GitHub; yoke needs no inbound connection)',
    }),
    default: 'api',
    meaning:
      'how Actions runs reach yoke: `api` (they call `YOKE_PUBLIC_URL`) or `github` (no inbound connection: runner and results travel through the repository; see "How runs reach yoke")',
  },
  YOKE_PUBLIC_URL: {
    schema: publicUrl,
    shown: '`http://localhost:$PORT`',
    meaning:
      "yoke's URL, as runs reach it (also the OIDC audience); with `YOKE_RUNS_REACH=github` only the audience, and may be unset",
  },
  YOKE_OIDC_ISSUER: {
    schema: z.url({ message: 'must be a URL' }),
    default: 'https://token.actions.githubusercontent.com',
    meaning: 'the issuer whose tokens runs present',
  },
  YOKE_OIDC_JWKS_URL: {
    schema: z.url({ message: 'must be a URL' }),
    shown: '`$YOKE_OIDC_ISSUER/.well-known/jwks`',
    meaning: 'its published keys',
  },
  YOKE_TRUSTED_MARKER_LOGINS: {
    schema: commaList,
    default: '',
    meaning:
      "logins besides yoke's own whose verdict markers are yoke's records (a former app identity, say); merges still follow only the verdicts yoke recorded",
  },
  YOKE_BOT_LOGIN: {
    schema: z.string(),
    shown: '`<app slug>[bot]`',
    meaning: "yoke's own login, when it cannot be asked of GitHub",
  },
  YOKE_DAILY_USD: {
    schema: dollars('100'),
    meaning:
      "the fleet's daily budget (UTC day): what runs launched today may cost, spent plus reserved by live runs; a run launches only if its whole limit fits (`docs/budgets.md`)",
  },
  YOKE_MONTHLY_USD: {
    schema: dollars('2000'),
    meaning: "the fleet's monthly budget (UTC month), the same way",
  },
  YOKE_NEW_WORK_SHARE: {
    schema: z.coerce
      .number({ message: 'must be a fraction, e.g. 0.8' })
      .gt(0, 'must be above 0 and at most 1, e.g. 0.8')
      .max(1, 'must be above 0 and at most 1, e.g. 0.8'),
    default: '1',
    meaning:
      'the part of each fleet budget new work may take, e.g. `0.8`: the rest is left for fixes, which finish work in flight (landers reserve nothing)',
  },
  YOKE_METRICS_TOKEN: {
    schema: z.string().min(SECRET_MIN_LENGTH, {
      message: `must be at least ${SECRET_MIN_LENGTH} characters; make one with \`openssl rand -hex 32\``,
    }),
    meaning:
      "a bearer token that may read `/yoke/metrics` and nothing else (Prometheus's `authorization` credentials); operator tokens may read it too",
  },
  YOKE_METRICS_ADDRESS: {
    schema: z
      .string()
      .trim()
      .regex(/^[\w.-]+:\d{1,5}$/, 'must be host:port, e.g. 127.0.0.1:9464')
      .transform((s) => {
        const at = s.lastIndexOf(':');
        return { host: s.slice(0, at), port: Number(s.slice(at + 1)) };
      })
      .refine((a) => a.port >= 1 && a.port <= 65535, 'must name a port from 1 to 65535, e.g. 127.0.0.1:9464'),
    meaning:
      'also serve `/metrics` on this address, with no token (e.g. `127.0.0.1:9464`): for a Prometheus on the same host or a network only operators reach',
  },
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    schema: z.url({ message: 'must be a URL, e.g. http://127.0.0.1:4318' }),
    meaning:
      'where yoke sends its OpenTelemetry traces over OTLP/HTTP (its `/v1/traces`); unset, yoke keeps no span and exports nothing',
  },
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: {
    schema: z.url({ message: 'must be a URL, e.g. http://127.0.0.1:4318/v1/traces' }),
    meaning: 'the traces endpoint itself, when it is not `$OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces`',
  },
  OTEL_EXPORTER_OTLP_HEADERS: {
    schema: z.string().transform((s, ctx) => {
      const headers: Record<string, string> = {};
      // A header's value is a collector's credential: an error names the header's place and name, never its value.
      for (const [i, part] of commaList.parse(s).entries()) {
        const at = part.indexOf('=');
        if (at <= 0) {
          ctx.addIssue({
            code: 'custom',
            message: `header ${i + 1} is not key=value (its text is not shown), e.g. authorization=Bearer%20TOKEN`,
          });
          return z.NEVER;
        }
        const key = part.slice(0, at).trim();
        try {
          headers[key] = decodeURIComponent(part.slice(at + 1).trim());
        } catch {
          ctx.addIssue({
            code: 'custom',
            message: `the value of ${/^[\w-]{1,64}$/.test(key) ? key : `header ${i + 1}`} is not valid percent-encoding (it is not shown): write a space as %20 and a % as %25`,
          });
          return z.NEVER;
        }
      }
      return headers;
    }),
    default: '',
    meaning: "headers sent with each export, `key=value` comma-separated (a collector's credentials)",
  },
  OTEL_SERVICE_NAME: {
    schema: z.string().min(1),
    default: 'yoke',
    meaning: "the service name yoke's spans carry",
  },
  YOKE_DASHBOARD_REFRESH_SECONDS: {
    schema: positiveInt,
    default: '10',
    meaning: 'how often an open dashboard page fetches itself again',
  },
  PORT: {
    schema: positiveInt.refine((n) => n <= 65_535, 'must be a port number, from 1 to 65535'),
    default: '3000',
    meaning: 'the port yoke listens on',
    probot: true,
  },
  APP_ID: {
    schema: z.string(),
    meaning:
      "the app's id, which names yoke to runs that reach it through GitHub when YOKE_PUBLIC_URL is unset, and which `yoke doctor` expects the default branch's rules to require yoke/lander from",
    probot: true,
  },
  GHE_HOST: {
    schema: z.string(),
    meaning: "where GitHub Enterprise Server (or the sandbox's forge) lives; yoke links to its pages",
    probot: true,
  },
  GHE_PROTOCOL: {
    schema: z.enum(['http', 'https'], { message: 'must be "http" or "https"' }),
    default: 'https',
    meaning: "GitHub Enterprise Server's protocol",
    probot: true,
  },
} satisfies Record<string, Setting<z.ZodType>>;

type Settings = typeof SETTINGS;
type Field<S> = S extends { schema: infer Z extends z.ZodType; default: string }
  ? z.ZodPrefault<Z>
  : S extends { schema: infer Z extends z.ZodType }
    ? z.ZodOptional<Z>
    : never;

function envSchema(): z.ZodObject<{ [K in keyof Settings]: Field<Settings[K]> }> {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, s] of entriesOf<Record<string, Setting<z.ZodType>>>(SETTINGS))
    shape[name] = s.default !== undefined ? s.schema.prefault(s.default) : s.schema.optional();
  // The one cast: the loop builds exactly the shape Field<> names, key by key.
  return z.object(shape) as unknown as z.ZodObject<{ [K in keyof Settings]: Field<Settings[K]> }>;
}

/** The environment yoke reads, derived from SETTINGS. */
export const OperatorEnv = envSchema();
export type OperatorEnv = z.infer<typeof OperatorEnv>;

const cell = (s: Setting<z.ZodType>): string =>
  s.shown ??
  (s.default === undefined || s.default === '' ? '' : /^\d+$/.test(s.default) ? s.default : `\`${s.default}\``);

/** yoke's own variables as the markdown table docs/hosting.md carries (and `yoke config settings` prints). */
export function settingsTable(): string {
  const rows = entriesOf<Record<string, Setting<z.ZodType>>>(SETTINGS)
    .filter(([, s]) => !s.probot)
    .map(([name, s]) => `| \`${name}\` |${cell(s) ? ` ${cell(s)} ` : ' '}| ${s.meaning} |`);
  return ['| variable | default | meaning |', '|---|---|---|', ...rows].join('\n') + '\n';
}
