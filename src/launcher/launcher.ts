import type { RepoRef } from '../forge/types.js';
import type { Run, RunKind } from '../store/fleet/runs.js';

/** The facts a run starts with, handed to it as workflow inputs or environment. */
export interface LaunchSpec {
  runId: string;
  kind: RunKind;
  repo: RepoRef;
  subject: string;
  issueNumber: number | null;
  prNumber: number | null;
  headSha: string | null;
  /** LD01: for a lander, the base commit it validates the head on (the merge of the head onto it). */
  baseSha: string | null;
  /** LD05: for a lander, the claim PR heads merged onto the base before its own, in order (none: the head alone). */
  stack: readonly string[];
  /** LD03: the merge commit yoke built for a lander to judge, which lands as it is (null: it merges the heads itself). */
  /** The W3C trace context of the run's issue, when yoke exports traces: a traced job joins the issue's trace. */
  traceparent?: string;
  landSha: string | null;
  deadline: number;
  /** A per-run secret for launchers whose runs cannot get an OIDC token. */
  secret: string | null;
  apiUrl: string;
  workflow: string;
  ref: string;
  /** The agent's turn and spend limits (AFK and fix runs). */
  limits: { maxTurns: number; maxUsd: number | null; networkAllow?: string[] };
  /** For a fix run: the lander's rejection it repairs, with the failing output. */
  rejection: string | null;
}

/** How much of a rejection goes to a fix run (its end, where the failure is). */
export const REJECTION_LIMIT = 8000;

export function limitsJson(l: LaunchSpec['limits']): string {
  return JSON.stringify({
    max_turns: l.maxTurns,
    ...(l.maxUsd !== null ? { max_usd: l.maxUsd } : {}),
    ...(l.networkAllow?.length ? { network_allow: l.networkAllow } : {}),
  });
}

export type Liveness =
  | { state: 'running'; ref?: string }
  | { state: 'ended'; ref?: string; detail?: string }
  /** The launch was recorded but nothing ever started (a crash between record and start). */
  | { state: 'never_started'; detail: string }
  | { state: 'unknown'; detail: string };

export interface Launcher {
  readonly name: 'actions' | 'command';
  /** Whether runs of this kind report with a per-run secret (TR02: never a lander's, whose judged code could read it). */
  usesSecret(kind: RunKind): boolean;
  /** The reference recorded with the run before start, so a crash in between can be recovered. */
  pendingRef(spec: { workflow: string; ref: string }): string | null;
  start(spec: LaunchSpec): Promise<{ ref: string | null }>;
  liveness(run: Run, repo: RepoRef): Promise<Liveness>;
  cancel(run: Run, repo: RepoRef): Promise<void>;
}

export function launchEnv(spec: LaunchSpec): Record<string, string> {
  const env: Record<string, string> = {
    YOKE_RUN_ID: spec.runId,
    YOKE_RUN_KIND: spec.kind,
    YOKE_REPO: spec.repo.fullName,
    YOKE_SUBJECT: spec.subject,
    YOKE_DEADLINE: new Date(spec.deadline).toISOString(),
    YOKE_API_URL: spec.apiUrl,
  };
  if (spec.issueNumber !== null) env.YOKE_ISSUE = String(spec.issueNumber);
  if (spec.prNumber !== null) env.YOKE_PR = String(spec.prNumber);
  if (spec.headSha) env.YOKE_HEAD_SHA = spec.headSha;
  if (spec.baseSha) env.YOKE_BASE_SHA = spec.baseSha;
  if (spec.stack.length) env.YOKE_STACK = spec.stack.join(' ');
  if (spec.landSha) env.YOKE_LAND_SHA = spec.landSha;
  if (spec.secret) env.YOKE_RUN_SECRET = spec.secret;
  env.YOKE_LIMITS = limitsJson(spec.limits);
  if (spec.rejection) env.YOKE_REJECTION = spec.rejection;
  return env;
}
