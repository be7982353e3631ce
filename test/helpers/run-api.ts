import { createSign, generateKeyPairSync, randomBytes } from 'node:crypto';
import { OidcVerifier } from '../../src/http/api/oidc.js';
import { hashSecret } from '../../src/fleet/runs/launch.js';
import type { Harness } from './fleet.js';
import { startApi } from './api-server.js';

// yoke's API over real loopback HTTP with an OIDC issuer whose keys the test
// makes, live runs to report for, and tokens as a workflow run would hold them.

export const ISSUER = 'https://issuer.test';
export const AUDIENCE = 'https://yoke.test';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
export const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
export const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'k1', use: 'sig', alg: 'RS256' };

export function jwt(claims: Record<string, unknown>, key = privateKey, kid = 'k1'): string {
  const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const head = enc({ alg: 'RS256', typ: 'JWT', kid });
  const body = enc(claims);
  const sig = createSign('RSA-SHA256').update(`${head}.${body}`).sign(key).toString('base64url');
  return `${head}.${body}.${sig}`;
}

/** yoke's API with an OIDC verifier that trusts the test's key, on loopback. */
export async function startRunApi(
  h: Harness,
  tokens: string[],
  runsReach: 'api' | 'github' = 'api',
): Promise<{ url: string; close: () => Promise<void> }> {
  const fetchKeys = (async () => new Response(JSON.stringify({ keys: [jwk] }), { status: 200 })) as typeof fetch;
  const oidc = new OidcVerifier({
    issuer: ISSUER,
    jwksUrl: `${ISSUER}/.well-known/jwks`,
    audience: AUDIENCE,
    now: h.clock.now,
    fetch: fetchKeys,
  });
  return startApi(h, { tokens, oidc, audience: AUDIENCE, runsReach });
}

/** The head a test lander run was launched to validate. */
export const LANDER_HEAD = 'abcdef1'.padEnd(40, '0');

export async function liveRun(
  h: Harness,
  over: {
    kind?: 'afk_auto' | 'lander' | 'fix';
    secret?: string | null;
    ref?: string;
    issue?: number;
    repo?: string;
    /** BU01: what the budgets hold for it until its spend is known. */
    reservedUsd?: number;
  } = {},
) {
  const id = `r${randomBytes(3).toString('hex')}`;
  const onPr = over.kind === 'lander' || over.kind === 'fix';
  const repo = over.repo ?? 'acme/api';
  await h.store.repos.ensure(repo, 1, h.clock.now());
  const run = {
    id,
    repo,
    kind: over.kind ?? 'afk_auto',
    subject: onPr ? 'pr#7' : `issue#${over.issue ?? 1}`,
    issueNumber: over.issue ?? 1,
    prNumber: onPr ? 7 : null,
    headSha: onPr ? LANDER_HEAD : null,
    launchedAt: h.clock.now(),
    budgetDeadline: h.clock.now() + 3600_000,
    launcher: over.secret === null ? 'actions' : 'command',
    launcherRef: over.ref ?? null,
    secretHash: over.secret === null ? null : hashSecret(over.secret ?? 'the-secret'),
    capAtLaunch: 2,
  };
  // A reservation is recorded as a launch records it (insertIfRoom), the cap set out of the way.
  if (over.reservedUsd === undefined) await h.store.runs.insert({ ...run, liveAtLaunch: 1 });
  else await h.store.runs.insertIfRoom({ ...run, reservedUsd: over.reservedUsd }, 100, false);
  return id;
}

export const post = (url: string, body: unknown, token?: string) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

export const WF = { id: 4242, status: 'in_progress', conclusion: null, repositoryId: 99, event: 'workflow_dispatch' };
export const good = (now: number) => ({
  iss: ISSUER,
  aud: AUDIENCE,
  exp: now + 300,
  iat: now,
  repository: 'acme/api',
  repository_id: '99',
  run_id: '4242',
  workflow_ref: 'acme/api/.github/workflows/yoke-run.yml@refs/heads/main',
  event_name: 'workflow_dispatch',
  actor: 'yoke[bot]',
});
