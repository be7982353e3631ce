import type { Refusal } from '../../kernel/codes/table.js';
import type { DeliverySettings } from '../../config/delivery.js';
import type { Sql } from '../sql/sql.js';
import { TABLES, type TableRow } from '../tables.js';
import type { StoredWait } from '../sql/stored-json.js';

export type { StoredWait } from '../sql/stored-json.js';

// Deployment runs, their members and their stages.

export const RUN_STATUSES = ['active', 'succeeded', 'failed', 'superseded'] as const;
export type DeploymentStatus = (typeof RUN_STATUSES)[number];

export interface DeploymentRun {
  id: string;
  repo: string;
  commit: string;
  /** The delivery settings as they were when the run was created: its stages never change under it. */
  settings: DeliverySettings;
  currentStage: number;
  status: DeploymentStatus;
  creator: string | null;
  driverId: string | null;
  leaseUntil: number | null;
  /** The driver's tenure: the same across its renewals, new when another driver takes over. */
  leaseToken: string | null;
  /** How its driver reaches yoke; a driver that started on HTTPS never switches (DX09). */
  driverTransport: 'https' | 'db' | null;
  supersedes: string | null;
  trackingIssue: number | null;
  trackingHash: string | null;
  /** What the last gate check left waiting at its stage (QA23). */
  lastWaits: { stage: string; waits: StoredWait[] } | null;
  /** TR12: every stage done, and since when; it succeeds once no accepted member is owed its close-out. */
  closingSince: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface Member {
  runId: string;
  issueNumber: number;
  prNumber: number;
  position: number;
  removedAt: number | null;
  removedBy: string | null;
  removedReason: string | null;
}

export const STAGE_STATES = ['running', 'succeeded', 'failed', 'frozen', 'settled'] as const;
export type StageState = (typeof STAGE_STATES)[number];

export interface StageRecord {
  runId: string;
  stage: string;
  state: StageState;
  attempts: number;
  detail: string | null;
  /** A refusal that holds the whole stage (a run-level plan that does not parse, say). */
  refusal: Refusal | null;
  updatedAt: number;
}

type RunRow = TableRow<'deployment_runs'>;

const toRun = (r: RunRow): DeploymentRun => ({
  id: r.id,
  repo: r.repo,
  commit: r.commit_sha,
  settings: r.settings,
  currentStage: r.current_stage,
  status: r.status,
  creator: r.creator,
  driverId: r.driver_id,
  leaseUntil: r.lease_until,
  leaseToken: r.lease_token,
  driverTransport: r.driver_transport,
  supersedes: r.supersedes,
  trackingIssue: r.tracking_issue,
  trackingHash: r.tracking_hash,
  lastWaits: r.waits,
  closingSince: r.closing_since,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

type MemberRow = TableRow<'deployment_members'>;

const toMember = (r: MemberRow): Member => ({
  runId: r.run_id,
  issueNumber: r.issue_number,
  prNumber: r.pr_number,
  position: r.position,
  removedAt: r.removed_at,
  removedBy: r.removed_by,
  removedReason: r.removed_reason,
});

type StageRow = TableRow<'deployment_stages'>;

const toStage = (r: StageRow): StageRecord => ({
  runId: r.run_id,
  stage: r.stage,
  state: r.state,
  attempts: r.attempts,
  detail: r.detail,
  refusal: r.refusal,
  updatedAt: r.updated_at,
});

export interface NewDeploymentRun {
  id: string;
  repo: string;
  commit: string;
  settings: DeliverySettings;
  creator: string | null;
  supersedes: string | null;
  members: { issueNumber: number; prNumber: number }[];
  at: number;
}

export class DeploymentRunStore {
  constructor(private readonly sql: Sql) {}

  /** Creates the run with its members; the caller holds the write transaction (and supersedes the old run first). */
  async create(run: NewDeploymentRun): Promise<void> {
    await this.sql.run(
      "INSERT INTO deployment_runs (id, repo, commit_sha, settings, status, creator, supersedes, created_at, updated_at) VALUES (?, ?, ?, ?, 'active', ?, ?, ?, ?)",
      [run.id, run.repo, run.commit, JSON.stringify(run.settings), run.creator, run.supersedes, run.at, run.at],
    );
    for (const [i, m] of run.members.entries())
      await this.sql.run(
        'INSERT INTO deployment_members (run_id, issue_number, pr_number, position) VALUES (?, ?, ?, ?)',
        [run.id, m.issueNumber, m.prNumber, i],
      );
  }

  async get(id: string): Promise<DeploymentRun | undefined> {
    const row = await this.sql.get(TABLES.deployment_runs, 'SELECT * FROM deployment_runs WHERE id = ?', [id]);
    return row && toRun(row);
  }

  async activeFor(repo: string): Promise<DeploymentRun | undefined> {
    const row = await this.sql.get(
      TABLES.deployment_runs,
      "SELECT * FROM deployment_runs WHERE repo = ? AND status = 'active'",
      [repo],
    );
    return row && toRun(row);
  }

  /** DP03: the runs of a repository pinned at one commit, whatever their status. */
  async atCommit(repo: string, commit: string): Promise<DeploymentRun[]> {
    return (
      await this.sql.all(
        TABLES.deployment_runs,
        'SELECT * FROM deployment_runs WHERE repo = ? AND commit_sha = ? ORDER BY created_at DESC, id',
        [repo, commit],
      )
    ).map(toRun);
  }

  async list(): Promise<DeploymentRun[]> {
    return (
      await this.sql.all(TABLES.deployment_runs, 'SELECT * FROM deployment_runs ORDER BY created_at DESC, id')
    ).map(toRun);
  }

  /** The run and every run it took over, newest first (QA14's lineage). */
  async lineage(id: string): Promise<DeploymentRun[]> {
    const out: DeploymentRun[] = [];
    const seen = new Set<string>();
    for (
      let run = await this.get(id);
      run && !seen.has(run.id);
      run = run.supersedes ? await this.get(run.supersedes) : undefined
    ) {
      seen.add(run.id);
      out.push(run);
    }
    return out;
  }

  async setStatus(id: string, status: DeploymentStatus, at: number): Promise<void> {
    await this.sql.run('UPDATE deployment_runs SET status = ?, updated_at = ? WHERE id = ?', [status, at, id]);
  }

  /**
   * Moves an active run from stage `from` to `to` (or, with `to` null, past
   * its last stage: closing) only if it is still at `from`: two checks of one
   * stage can advance it once, never skip the next stage.
   */
  async advanceFrom(id: string, from: number, to: number | null, at: number): Promise<boolean> {
    const res =
      to === null
        ? await this.sql.run(
            "UPDATE deployment_runs SET closing_since = ?, updated_at = ? WHERE id = ? AND current_stage = ? AND status = 'active' AND closing_since IS NULL",
            [at, at, id, from],
          )
        : await this.sql.run(
            "UPDATE deployment_runs SET current_stage = ?, updated_at = ? WHERE id = ? AND current_stage = ? AND status = 'active' AND closing_since IS NULL",
            [to, at, id, from],
          );
    return res.changes === 1;
  }

  /** TR12: a closing run succeeds (once), when the caller found no accepted member owed. */
  async finishClosing(id: string, at: number): Promise<boolean> {
    return (
      (
        await this.sql.run(
          "UPDATE deployment_runs SET status = 'succeeded', updated_at = ? WHERE id = ? AND status = 'active' AND closing_since IS NOT NULL",
          [at, id],
        )
      ).changes === 1
    );
  }

  /** The driver takes or renews the run's lease; refused (with the holder) while another driver's lease is current. */
  checkIn(
    id: string,
    driverId: string,
    leaseUntil: number,
    now: number,
    newToken: string,
    transport: 'https' | 'db' = 'https',
  ): Promise<{ ok: true; token: string; tookOver: boolean } | { ok: false; holder: string; until: number }> {
    return this.sql.transaction(async (tx) => {
      const row = await tx.get(TABLES.deployment_runs, 'SELECT * FROM deployment_runs WHERE id = ?', [id]);
      const run = row && toRun(row);
      if (run && run.driverId && run.driverId !== driverId && run.leaseUntil !== null && run.leaseUntil > now)
        return { ok: false as const, holder: run.driverId, until: run.leaseUntil };
      // A renewal keeps the tenure; a new driver (or one whose lease lapsed) starts a new one.
      const renewing =
        run?.driverId === driverId && run.leaseToken !== null && run.leaseUntil !== null && run.leaseUntil > now;
      const token = renewing ? run!.leaseToken! : newToken;
      await tx.run(
        'UPDATE deployment_runs SET driver_id = ?, lease_until = ?, lease_token = ?, driver_transport = COALESCE(driver_transport, ?), updated_at = ? WHERE id = ?',
        [driverId, leaseUntil, token, transport, now, id],
      );
      return { ok: true as const, token, tookOver: Boolean(run?.driverId && run.driverId !== driverId) };
    });
  }

  async setWaits(id: string, stage: string, waits: readonly StoredWait[]): Promise<void> {
    await this.sql.run('UPDATE deployment_runs SET waits = ? WHERE id = ?', [JSON.stringify({ stage, waits }), id]);
  }

  async setTracking(id: string, issue: number | null, hash: string | null): Promise<void> {
    await this.sql.run(
      'UPDATE deployment_runs SET tracking_issue = COALESCE(?, tracking_issue), tracking_hash = ? WHERE id = ?',
      [issue, hash, id],
    );
  }

  async members(runId: string): Promise<Member[]> {
    return (
      await this.sql.all(
        TABLES.deployment_members,
        'SELECT * FROM deployment_members WHERE run_id = ? ORDER BY position',
        [runId],
      )
    ).map(toMember);
  }

  async removeMember(runId: string, issueNumber: number, by: string, reason: string, at: number): Promise<boolean> {
    return (
      (
        await this.sql.run(
          'UPDATE deployment_members SET removed_at = ?, removed_by = ?, removed_reason = ? WHERE run_id = ? AND issue_number = ? AND removed_at IS NULL',
          [at, by, reason, runId, issueNumber],
        )
      ).changes === 1
    );
  }

  async stage(runId: string, stage: string): Promise<StageRecord | undefined> {
    const row = await this.sql.get(
      TABLES.deployment_stages,
      'SELECT * FROM deployment_stages WHERE run_id = ? AND stage = ?',
      [runId, stage],
    );
    return row && toStage(row);
  }

  async stages(runId: string): Promise<StageRecord[]> {
    return (
      await this.sql.all(TABLES.deployment_stages, 'SELECT * FROM deployment_stages WHERE run_id = ?', [runId])
    ).map(toStage);
  }

  async setStage(rec: {
    runId: string;
    stage: string;
    state: StageState;
    detail?: string | null;
    refusal?: Refusal | null;
    bumpAttempts?: boolean;
    at: number;
  }): Promise<void> {
    await this.sql.run(
      `INSERT INTO deployment_stages (run_id, stage, state, attempts, detail, refusal, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (run_id, stage) DO UPDATE SET state = excluded.state, attempts = deployment_stages.attempts + excluded.attempts,
         detail = excluded.detail, refusal = excluded.refusal, updated_at = excluded.updated_at`,
      [
        rec.runId,
        rec.stage,
        rec.state,
        rec.bumpAttempts ? 1 : 0,
        rec.detail ?? null,
        rec.refusal ? JSON.stringify(rec.refusal) : null,
        rec.at,
      ],
    );
  }
}
