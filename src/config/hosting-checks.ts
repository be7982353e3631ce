import { SECRET_MIN_LENGTH } from './settings-table.js';

// What `npm start` checks of yoke's hosting before it serves: the app's credentials, the webhook secret and
// proxy, and the settings a hosted yoke must have; each problem is named with its fix.

/**
 * The app's credentials, as `npm start` needs them: both (yoke runs), or
 * neither (yoke's setup page registers the app). Half a pair, or a key file
 * that is not there, stops yoke with the variable to fix, never a silent
 * fall into setup mode or a stack trace. Returns the problem, or null.
 */
export function appCredentialProblem(
  env: Record<string, string | undefined>,
  fileExists: (path: string) => boolean,
): string | null {
  const appId = Boolean(env.APP_ID);
  const keyPath = env.PRIVATE_KEY_PATH;
  if (keyPath && !env.PRIVATE_KEY && !fileExists(keyPath))
    return `PRIVATE_KEY_PATH names ${keyPath}, which is not there. Point it at the .pem file GitHub gave you when the app was created, or set PRIVATE_KEY to its text.`;
  const key = Boolean(env.PRIVATE_KEY || keyPath);
  if (appId && !key)
    return `APP_ID is set (${env.APP_ID}) but the app's private key is not. Set PRIVATE_KEY (the PEM text) or PRIVATE_KEY_PATH (its file); or unset APP_ID to run yoke's setup page, which registers the app and writes both to .env.`;
  if (key && !appId)
    return `The app's private key is set but APP_ID is not. Set APP_ID to the app's id (on its settings page on GitHub), or unset PRIVATE_KEY and PRIVATE_KEY_PATH to run the setup page.`;
  return null;
}

/**
 * Probot starts a smee.io proxy for WEBHOOK_PROXY_URL by installing
 * smee-client from the npm registry while it runs; yoke installs nothing at
 * run time, so it stops and says how to proxy instead.
 */
export function webhookProxyProblem(env: Record<string, string | undefined>): string | null {
  const url = env.WEBHOOK_PROXY_URL;
  if (!url) return null;
  const port = env.PORT || '3000';
  return `WEBHOOK_PROXY_URL is set (${url}), but yoke starts no webhook proxy: Probot would install smee-client from the npm registry while running. Unset it (remove it from .env too), and either point the app's webhook URL at yoke itself (https://<your host>/api/github/webhooks) or run the proxy yourself: \`npx smee-client@5.0.0 --url ${url} --path /api/github/webhooks --port ${port}\`.`;
}

/** Setup mode: no app id and no key yet; yoke serves its setup page. */
export const inSetupMode = (env: Record<string, string | undefined>): boolean =>
  !env.APP_ID && !env.PRIVATE_KEY && !env.PRIVATE_KEY_PATH;

/**
 * TR08: outside setup mode (no app credentials yet), a missing or
 * short webhook secret would let anyone sign webhooks (Probot's default is
 * "development"). Returns the problem to report, or null.
 */
export function webhookSecretProblem(env: Record<string, string | undefined>): string | null {
  const hasApp = Boolean(env.APP_ID) && Boolean(env.PRIVATE_KEY || env.PRIVATE_KEY_PATH);
  if (!hasApp) return null;
  const secret = env.WEBHOOK_SECRET ?? '';
  if (secret.length >= SECRET_MIN_LENGTH) return null;
  return `WEBHOOK_SECRET: ${secret ? `is ${secret.length} characters; it` : 'is not set; it'} must be at least ${SECRET_MIN_LENGTH} characters. Make one with \`openssl rand -hex 32\` and set it both here and as the webhook secret in the GitHub App's settings.`;
}

/** The key text as Probot reads PRIVATE_KEY: base64 of the PEM, or the PEM with its newlines written as `\n`. */
function keyText(value: string): string {
  const pem =
    /^[A-Za-z0-9+/=\s]+$/.test(value) && !value.includes('-----') ? Buffer.from(value, 'base64').toString() : value;
  return pem.replace(/\\n/g, '\n');
}

/**
 * With app credentials, what yoke could start with but never work: a private
 * key Node cannot read (Probot would print a stack trace and fall into its
 * setup page), no operator token (a sign-in form no token passes), and, with
 * the Actions launcher, no public URL (runs would be told localhost, which
 * GitHub's runners cannot reach). Each names the variable and its fix.
 */
export function hostingProblems(
  env: Record<string, string | undefined>,
  readFile: (path: string) => string,
  readKey: (pem: string) => void,
): string[] {
  if (inSetupMode(env)) return [];
  const problems: string[] = [];
  const source = env.PRIVATE_KEY ? 'PRIVATE_KEY is' : `PRIVATE_KEY_PATH names ${env.PRIVATE_KEY_PATH}, which is`;
  try {
    readKey(env.PRIVATE_KEY ? keyText(env.PRIVATE_KEY) : readFile(env.PRIVATE_KEY_PATH ?? ''));
  } catch {
    problems.push(
      `${source} not a private key yoke can read. Use the .pem file GitHub gave you when the app was created (its settings page makes a new one under "Private keys"): its whole text in PRIVATE_KEY, or its path in PRIVATE_KEY_PATH.`,
    );
  }
  if (!env.YOKE_API_TOKENS)
    problems.push(
      'YOKE_API_TOKENS is not set, so no one could sign in to the dashboard or use the CLI. Make a token with `openssl rand -hex 32` and set YOKE_API_TOKENS to it (several: comma-separated); the CLI reads it as YOKE_TOKEN.',
    );
  if (!env.YOKE_PUBLIC_URL && (env.YOKE_LAUNCHER ?? 'actions') === 'actions' && env.YOKE_RUNS_REACH !== 'github')
    problems.push(
      `YOKE_PUBLIC_URL is not set, so runs would be told to report to http://localhost:${env.PORT || '3000'}, which GitHub's runners cannot reach. Set YOKE_RUNS_REACH=github, and runs hand their results back through GitHub, with no URL of yoke's to reach; or set YOKE_PUBLIC_URL to the https address GitHub reaches yoke at (the app's webhook URL without /api/github/webhooks), e.g. YOKE_PUBLIC_URL=https://yoke.example.com.`,
    );
  return problems;
}

/**
 * TR06: with the command launcher, runs start under bubblewrap, or not at all: a run holds the PR's code
 * (a lander runs its tests), and as yoke's user it would read the app key. Names the fix, or null.
 */
export function runContainmentProblem(
  env: Record<string, string | undefined>,
  bwrapProblem: (bwrap: string) => string | null,
): string | null {
  if (inSetupMode(env) || env.YOKE_LAUNCHER !== 'command' || env.YOKE_COMMANDS_UNCONTAINED === '1') return null;
  const problem = bwrapProblem(env.YOKE_BWRAP || 'bwrap');
  if (!problem) return null;
  return `YOKE_LAUNCHER=command: ${problem}, and the command launcher runs each run under it, so that the PR's code a run holds cannot read the app key, the store or yoke's own process. Install it (\`sudo apt-get install -y bubblewrap\`; on Ubuntu 24.04 also \`sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0\`), or set YOKE_COMMANDS_UNCONTAINED=1 to run them as yoke's user, knowing they can then read all that.`;
}
