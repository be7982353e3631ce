import type { Sql } from '../sql/sql.js';
import { TABLES, type TableRow } from '../tables.js';

// DP01: each deploy stage's GitHub deployments (one per start), and DP03:
// what yoke answered as the environments' protection rule.

export const DEPLOYMENT_STATES = ['in_progress', 'success', 'failure', 'error'] as const;
export type DeploymentState = (typeof DEPLOYMENT_STATES)[number];

export interface StageDeployment {
  deploymentId: number;
  runId: string;
  stage: string;
  environment: string;
  commit: string;
  /** A stage run on Actions: its workflow file, and the workflow run once found. */
  workflow: string | null;
  workflowRunId: number | null;
  state: DeploymentState;
  logUrl: string | null;
  createdAt: number;
  updatedAt: number;
}

type Row = TableRow<'stage_deployments'>;

const toDeployment = (r: Row): StageDeployment => ({
  deploymentId: r.deployment_id,
  runId: r.run_id,
  stage: r.stage,
  environment: r.environment,
  commit: r.commit_sha,
  workflow: r.workflow,
  workflowRunId: r.workflow_run_id,
  state: r.state,
  logUrl: r.log_url,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export type ProtectionDecision = 'approved' | 'rejected' | 'ignored';
export type ProtectionAnswerState = 'answered' | 'refused' | 'unsent' | 'left';

export interface ProtectionReview {
  repo: string;
  workflowRunId: number;
  environment: string;
  sha: string;
  decision: ProtectionDecision;
  code: string;
  deploymentRun: string | null;
  /** What became of the answer: GitHub took it, refused it (it had one), could not be reached (it is sent again), or it was left for others. */
  answer: ProtectionAnswerState;
  createdAt: number;
}

type ReviewRow = TableRow<'protection_reviews'>;

/** DP05: what the last read of a gated stage's environment found. */
export interface EnvironmentCheck {
  repo: string;
  stage: string;
  environment: string;
  code: TableRow<'environment_checks'>['code'];
  /** The app whose rule was looked for (yoke's slug). */
  app: string;
  checkedAt: number;
}

const toReview = (r: ReviewRow): ProtectionReview => ({
  repo: r.repo,
  workflowRunId: r.workflow_run_id,
  environment: r.environment,
  sha: r.sha,
  decision: r.decision,
  code: r.code,
  deploymentRun: r.deployment_run,
  answer: r.answer,
  createdAt: r.created_at,
});

export class StageDeploymentRunStore {
  constructor(private readonly sql: Sql) {}

  async record(d: Omit<StageDeployment, 'workflowRunId' | 'logUrl' | 'updatedAt'>): Promise<void> {
    await this.sql.run(
      'INSERT INTO stage_deployments (deployment_id, run_id, stage, environment, commit_sha, workflow, state, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (deployment_id) DO NOTHING',
      [d.deploymentId, d.runId, d.stage, d.environment, d.commit, d.workflow, d.state, d.createdAt, d.createdAt],
    );
  }

  /** The stage's newest deployment (its current start), if any. */
  async latest(runId: string, stage: string): Promise<StageDeployment | undefined> {
    const row = await this.sql.get(
      TABLES.stage_deployments,
      'SELECT * FROM stage_deployments WHERE run_id = ? AND stage = ? ORDER BY created_at DESC, deployment_id DESC LIMIT 1',
      [runId, stage],
    );
    return row && toDeployment(row);
  }

  async forRun(runId: string): Promise<StageDeployment[]> {
    return (
      await this.sql.all(
        TABLES.stage_deployments,
        'SELECT * FROM stage_deployments WHERE run_id = ? ORDER BY created_at, deployment_id',
        [runId],
      )
    ).map(toDeployment);
  }

  async setState(deploymentId: number, state: DeploymentState, logUrl: string | null, at: number): Promise<void> {
    await this.sql.run(
      'UPDATE stage_deployments SET state = ?, log_url = COALESCE(?, log_url), updated_at = ? WHERE deployment_id = ?',
      [state, logUrl, at, deploymentId],
    );
  }

  async setWorkflowRun(deploymentId: number, workflowRunId: number, at: number): Promise<void> {
    await this.sql.run('UPDATE stage_deployments SET workflow_run_id = ?, updated_at = ? WHERE deployment_id = ?', [
      workflowRunId,
      at,
      deploymentId,
    ]);
  }

  /** Records an answer; a later request for the same workflow run and environment (a re-run) replaces it. */
  async recordReview(r: ProtectionReview): Promise<void> {
    await this.sql.run(
      `INSERT INTO protection_reviews (repo, workflow_run_id, environment, sha, decision, code, deployment_run, answer, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (repo, workflow_run_id, environment) DO UPDATE SET sha = excluded.sha, decision = excluded.decision, code = excluded.code,
         deployment_run = excluded.deployment_run, answer = excluded.answer, created_at = excluded.created_at`,
      [r.repo, r.workflowRunId, r.environment, r.sha, r.decision, r.code, r.deploymentRun, r.answer, r.createdAt],
    );
  }

  async reviews(repo: string): Promise<ProtectionReview[]> {
    return (
      await this.sql.all(
        TABLES.protection_reviews,
        'SELECT * FROM protection_reviews WHERE repo = ? ORDER BY created_at, workflow_run_id',
        [repo],
      )
    ).map(toReview);
  }

  /** TR26: environments whose newest protection-rule answer, since `since`, was a rejection because no stage names them. */
  async unruledRejections(since: number): Promise<{ repo: string; environment: string; at: number }[]> {
    const rows = await this.sql.all(
      TABLES.protection_reviews,
      'SELECT * FROM protection_reviews WHERE created_at >= ? ORDER BY repo, environment, created_at, workflow_run_id',
      [since],
    );
    const newest = new Map<string, ReviewRow>();
    for (const r of rows) newest.set(`${r.repo}\u0000${r.environment.toLowerCase()}`, r);
    return [...newest.values()]
      .filter((r) => r.code === 'protection_unruled' && r.decision === 'rejected')
      .map((r) => ({ repo: r.repo, environment: r.environment, at: r.created_at }));
  }

  /** Answers GitHub could not be sent, oldest first: the sweep sends them again. */
  async unsentReviews(): Promise<ProtectionReview[]> {
    return (
      await this.sql.all(
        TABLES.protection_reviews,
        "SELECT * FROM protection_reviews WHERE answer = 'unsent' ORDER BY created_at, workflow_run_id",
      )
    ).map(toReview);
  }

  /** Replaces what the last read of a repository's gated environments found. */
  async recordEnvironmentChecks(repo: string, checks: readonly Omit<EnvironmentCheck, 'repo'>[]): Promise<void> {
    await this.sql.transaction(async (tx) => {
      await tx.run('DELETE FROM environment_checks WHERE repo = ?', [repo]);
      for (const c of checks)
        await tx.run(
          'INSERT INTO environment_checks (repo, stage, environment, code, app, checked_at) VALUES (?, ?, ?, ?, ?, ?)',
          [repo, c.stage, c.environment, c.code, c.app, c.checkedAt],
        );
    });
  }

  async environmentChecks(): Promise<EnvironmentCheck[]> {
    const rows = await this.sql.all(TABLES.environment_checks, 'SELECT * FROM environment_checks ORDER BY repo, stage');
    return rows.map((r) => ({
      repo: r.repo,
      stage: r.stage,
      environment: r.environment,
      code: r.code,
      app: r.app,
      checkedAt: r.checked_at,
    }));
  }
}
