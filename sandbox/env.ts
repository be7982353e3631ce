import { OperatorEnv } from '../src/config/settings-table.js';

// `npm run sandbox` and yoke's settings: the sandbox wires some itself (its store, its forge, the tokens its
// people and runs use, how runs reach yoke), and every other YOKE_* setting in the environment passes through
// to the yoke it starts (YOKE_DAILY_USD, YOKE_GLOBAL_CAP, YOKE_NEW_WORK_SHARE, …), so an operator can try
// budgets, caps and ticks on the demo. A setting the sandbox wires is refused, saying why, not ignored.

/** The settings the sandbox sets itself, each with why and what to use instead. */
export const SANDBOX_WIRES: Readonly<Record<string, string>> = {
  YOKE_DB_PATH: 'the sandbox keeps its store in its own data folder (--postgres for PostgreSQL)',
  YOKE_DATABASE_URL: 'the sandbox keeps its store in its own data folder (--postgres starts a PostgreSQL of its own)',
  YOKE_PUBLIC_URL: 'the sandbox tells runs where its yoke listens',
  YOKE_OIDC_ISSUER: "runs' tokens come from the embedded forge",
  YOKE_OIDC_JWKS_URL: "runs' tokens come from the embedded forge",
  YOKE_API_TOKENS: 'the sandbox makes the operator token it prints',
  YOKE_PERSON_TOKENS: "the sandbox makes its people's tokens",
  YOKE_LAUNCHER: 'use --launcher',
  YOKE_RUNS_REACH: 'use --runs-reach',
  YOKE_COMMAND: 'the command launcher runs the demo agent',
  YOKE_COMMAND_WRITABLE: 'the command launcher runs the demo agent',
  YOKE_COMMAND_NETWORK_ALLOW: 'the command launcher runs the demo agent',
  YOKE_COMMANDS_UNCONTAINED: 'the demo agent runs contained',
  YOKE_THROTTLE: 'the embedded forge has no secondary rate limits',
};

/** The YOKE_* settings to pass to the sandbox's yoke, or the settings it refuses (each named with why). */
export function sandboxSettings(
  given: Record<string, string | undefined>,
): { ok: true; env: Record<string, string> } | { ok: false; problems: string[] } {
  const env: Record<string, string> = {};
  const problems: string[] = [];
  for (const key of Object.keys(OperatorEnv.shape)) {
    const value = given[key];
    if (!key.startsWith('YOKE_') || value === undefined || value === '') continue;
    if (key in SANDBOX_WIRES)
      problems.push(
        `${key} is set, but the sandbox sets it itself: ${SANDBOX_WIRES[key]}. Unset it to run the sandbox.`,
      );
    else env[key] = value;
  }
  return problems.length ? { ok: false, problems } : { ok: true, env };
}
