import { createHash, timingSafeEqual } from 'node:crypto';

// TR11: every bearer yoke accepts has a role, and what is recorded as "who"
// comes from it, never from a request body.
//  - operator (YOKE_API_TOKENS): run and driver work; it records as
//    `operator`, or as the run's own driver while acting for it;
//  - person (YOKE_PERSON_TOKENS, login:token): one GitHub login, whose
//    authority is what GitHub says that login may do on the repository;
//  - run: a live yoke run's own credential (its OIDC token or run secret),
//    for the QA of the item it holds.

export type Credential = { role: 'operator' } | { role: 'person'; login: string } | { role: 'run'; runId: string };

export interface TokenTable {
  operator: readonly string[];
  people: readonly { login: string; token: string }[];
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** The operator or person a static token names (constant-time per entry), or null. */
export function credentialOf(token: string | null | undefined, table: TokenTable): Credential | null {
  if (!token) return null;
  const d = digest(token);
  let found: Credential | null = null;
  // Compare against every entry so the time taken does not tell which kind matched.
  for (const t of table.operator) if (timingSafeEqual(digest(t), d)) found ??= { role: 'operator' };
  for (const p of table.people) if (timingSafeEqual(digest(p.token), d)) found ??= { role: 'person', login: p.login };
  return found;
}

/** Whether a bearer may read the metrics: the metrics token (YOKE_METRICS_TOKEN) or an operator's (constant-time per entry). */
export function readsMetrics(token: string | null, table: TokenTable, metricsToken: string | undefined): boolean {
  if (!token) return false;
  const d = digest(token);
  let ok = false;
  for (const t of [...table.operator, ...(metricsToken ? [metricsToken] : [])])
    ok = timingSafeEqual(digest(t), d) || ok;
  return ok;
}
