import type { Sql } from '../sql/sql.js';
import type {
  Attachment,
  MemberPlan,
  MemberStage,
  NewQaVerdict,
  PlanGroup,
  PlanSnapshot,
  QaVerdict,
  Wake,
} from './qa-records.js';
import { int, text } from '../sql/columns.js';
import { TABLES } from '../tables.js';

// Scoped-QA records: attachments, what froze at QA entry, plan snapshots and
// groups, verdicts, failure reviews and wakes (each record's shape: qa-records.ts).

export * from './qa-records.js';

export class QaStore {
  constructor(private readonly sql: Sql) {}

  // Attachments

  async attach(a: Attachment): Promise<boolean> {
    return (
      (
        await this.sql.run(
          'INSERT INTO qa_attachments (repo, issue_number, plan_id, attached_by, source, attached_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
          [a.repo, a.issueNumber, a.planId, a.attachedBy, a.source, a.attachedAt],
        )
      ).changes === 1
    );
  }

  async attachments(repo: string, issueNumber?: number): Promise<Attachment[]> {
    const rows =
      issueNumber === undefined
        ? await this.sql.all(
            TABLES.qa_attachments,
            'SELECT * FROM qa_attachments WHERE repo = ? ORDER BY attached_at, issue_number, plan_id',
            [repo],
          )
        : await this.sql.all(
            TABLES.qa_attachments,
            'SELECT * FROM qa_attachments WHERE repo = ? AND issue_number = ? ORDER BY attached_at, plan_id',
            [repo, issueNumber],
          );
    return rows.map((r) => ({
      repo: r.repo,
      issueNumber: r.issue_number,
      planId: r.plan_id,
      attachedBy: r.attached_by,
      source: r.source,
      attachedAt: r.attached_at,
    }));
  }

  // What froze at QA entry

  async freezeMember(m: MemberStage, plans: readonly MemberPlan[]): Promise<void> {
    await this.sql.run(
      'INSERT INTO member_stages (run_id, stage, issue_number, holder, pr_author, refusal, frozen_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      [m.runId, m.stage, m.issueNumber, m.holder, m.prAuthor, m.refusal ? JSON.stringify(m.refusal) : null, m.frozenAt],
    );
    for (const p of plans)
      await this.sql.run(
        'INSERT INTO member_plans (run_id, stage, issue_number, plan_id, owner, group_id) VALUES (?, ?, ?, ?, ?, ?)',
        [p.runId, p.stage, p.issueNumber, p.planId, p.owner, p.groupId],
      );
  }

  async memberStages(runId: string, stage: string): Promise<MemberStage[]> {
    const rows = await this.sql.all(
      TABLES.member_stages,
      'SELECT * FROM member_stages WHERE run_id = ? AND stage = ? ORDER BY issue_number',
      [runId, stage],
    );
    return rows.map((r) => ({
      runId: r.run_id,
      stage: r.stage,
      issueNumber: r.issue_number,
      holder: r.holder,
      prAuthor: r.pr_author,
      refusal: r.refusal,
      frozenAt: r.frozen_at,
      settledAt: r.settled_at,
    }));
  }

  /** Marks members settled at a stage, in one statement; one settled before keeps its time. */
  async markSettled(runId: string, stage: string, issueNumbers: readonly number[], at: number): Promise<void> {
    if (issueNumbers.length === 0) return;
    await this.sql.run(
      `UPDATE member_stages SET settled_at = ? WHERE run_id = ? AND stage = ? AND issue_number IN (${issueNumbers.map(() => '?').join(', ')}) AND settled_at IS NULL`,
      [at, runId, stage, ...issueNumbers],
    );
  }

  async memberPlans(runId: string, stage: string): Promise<MemberPlan[]> {
    const rows = await this.sql.all(
      TABLES.member_plans,
      'SELECT * FROM member_plans WHERE run_id = ? AND stage = ? ORDER BY issue_number, plan_id',
      [runId, stage],
    );
    return rows.map((r) => ({
      runId: r.run_id,
      stage: r.stage,
      issueNumber: r.issue_number,
      planId: r.plan_id,
      owner: r.owner,
      groupId: r.group_id,
    }));
  }

  // Plans and groups

  async saveSnapshot(s: PlanSnapshot): Promise<void> {
    await this.sql.run(
      'INSERT INTO plan_snapshots (run_id, plan_id, name, commit_sha, cases) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
      [s.runId, s.planId, s.name, s.commit, JSON.stringify(s.cases)],
    );
  }

  async snapshots(runId: string): Promise<PlanSnapshot[]> {
    const rows = await this.sql.all(
      TABLES.plan_snapshots,
      'SELECT * FROM plan_snapshots WHERE run_id = ? ORDER BY plan_id',
      [runId],
    );
    return rows.map((r) => ({
      runId: r.run_id,
      planId: r.plan_id,
      name: r.name,
      commit: r.commit_sha,
      cases: r.cases,
    }));
  }

  async openGroup(g: Omit<PlanGroup, 'state' | 'outcome' | 'closedAt'>): Promise<void> {
    await this.sql.run(
      "INSERT INTO plan_groups (id, run_id, stage, plan_id, plan_name, cases, target_commit, covered_item_ids, run_level, state, opened_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'open', ?)",
      [
        g.id,
        g.runId,
        g.stage,
        g.planId,
        g.planName,
        JSON.stringify(g.cases),
        g.targetCommit,
        JSON.stringify(g.coveredItemIds),
        g.runLevel ? 1 : 0,
        g.openedAt,
      ],
    );
  }

  /** Groups of these runs, oldest first. */
  async groups(runIds: readonly string[]): Promise<PlanGroup[]> {
    if (runIds.length === 0) return [];
    const rows = await this.sql.all(
      TABLES.plan_groups,
      `SELECT * FROM plan_groups WHERE run_id IN (${runIds.map(() => '?').join(', ')}) ORDER BY opened_at, id`,
      [...runIds],
    );
    return rows.map((r) => ({
      id: r.id,
      runId: r.run_id,
      stage: r.stage,
      planId: r.plan_id,
      planName: r.plan_name,
      cases: r.cases,
      targetCommit: r.target_commit,
      coveredItemIds: r.covered_item_ids,
      runLevel: r.run_level === 1,
      state: r.state,
      outcome: r.outcome,
      openedAt: r.opened_at,
      closedAt: r.closed_at,
    }));
  }

  async closeGroup(id: string, outcome: 'passed' | 'superseded', at: number): Promise<void> {
    await this.sql.run(
      "UPDATE plan_groups SET state = 'closed', outcome = ?, closed_at = ? WHERE id = ? AND state = 'open'",
      [outcome, at, id],
    );
  }

  async closeOpenGroupsOf(runId: string, outcome: 'superseded', at: number): Promise<void> {
    await this.sql.run(
      "UPDATE plan_groups SET state = 'closed', outcome = ?, closed_at = ? WHERE run_id = ? AND state = 'open'",
      [outcome, at, runId],
    );
  }

  async setCovered(id: string, covered: readonly number[]): Promise<void> {
    await this.sql.run('UPDATE plan_groups SET covered_item_ids = ? WHERE id = ?', [JSON.stringify(covered), id]);
  }

  // Verdicts and failure reviews

  async recordVerdict(v: NewQaVerdict): Promise<number> {
    const row = await this.sql.get(
      { id: int },
      `INSERT INTO qa_verdicts (run_id, stage, issue_number, group_id, plan_id, case_id, commit_sha, result, evidence, source, replaces, recorded_by, recorded_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
      [
        v.runId,
        v.stage,
        v.issueNumber,
        v.groupId,
        v.planId,
        v.caseId,
        v.commit,
        v.result,
        v.evidence,
        v.source,
        v.replaces,
        v.recordedBy,
        v.recordedAt,
      ],
    );
    return row!.id;
  }

  /** Verdicts recorded for these runs, in the order they were recorded. */
  async verdicts(runIds: readonly string[]): Promise<QaVerdict[]> {
    if (runIds.length === 0) return [];
    const rows = await this.sql.all(
      TABLES.qa_verdicts,
      `SELECT * FROM qa_verdicts WHERE run_id IN (${runIds.map(() => '?').join(', ')}) ORDER BY id`,
      [...runIds],
    );
    return rows.map((r) => ({
      id: r.id,
      runId: r.run_id,
      stage: r.stage,
      issueNumber: r.issue_number,
      groupId: r.group_id,
      planId: r.plan_id,
      caseId: r.case_id,
      commit: r.commit_sha,
      result: r.result,
      evidence: r.evidence,
      source: r.source,
      replaces: r.replaces,
      recordedBy: r.recorded_by,
      recordedAt: r.recorded_at,
    }));
  }

  /** Opens the failure review of a failing verdict; false when it already has one (QA05). */
  async openFailureReview(r: {
    verdictId: number;
    runId: string;
    stage: string;
    subject: string;
    caseId: string;
    at: number;
  }): Promise<boolean> {
    return (
      (
        await this.sql.run(
          'INSERT INTO failure_reviews (verdict_id, run_id, stage, subject, case_id, opened_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
          [r.verdictId, r.runId, r.stage, r.subject, r.caseId, r.at],
        )
      ).changes === 1
    );
  }

  async failureReviews(
    runId: string,
  ): Promise<{ verdictId: number; stage: string; subject: string; caseId: string; openedAt: number }[]> {
    const rows = await this.sql.all(
      TABLES.failure_reviews,
      'SELECT * FROM failure_reviews WHERE run_id = ? ORDER BY verdict_id',
      [runId],
    );
    return rows.map((r) => ({
      verdictId: r.verdict_id,
      stage: r.stage,
      subject: r.subject,
      caseId: r.case_id,
      openedAt: r.opened_at,
    }));
  }

  // Wakes

  /**
   * Records wakes in one statement per 200 and answers with those that are new: a wait already recorded for its
   * recipient woke them before (QA01/QA02), so it is left out.
   */
  async recordWakes(wakes: readonly Wake[]): Promise<Wake[]> {
    // A wake is one per (run, stage, subject, wait), the table's key: a repeat within the list is not new either.
    const key = (w: { subject: string; waitKey: string }) => `${w.subject}\u0000${w.waitKey}`;
    const once = [...new Map(wakes.map((w) => [`${w.runId}\u0000${w.stage}\u0000${key(w)}`, w])).values()];
    const fresh: Wake[] = [];
    for (let i = 0; i < once.length; i += 200) {
      const chunk = once.slice(i, i + 200);
      const rows = await this.sql.all(
        { run_id: text, stage: text, subject: text, wait_key: text },
        `INSERT INTO qa_wakes (run_id, stage, recipient, subject, wait_key, reason, woken_at) VALUES ${chunk.map(() => '(?, ?, ?, ?, ?, ?, ?)').join(', ')} ON CONFLICT DO NOTHING RETURNING run_id, stage, subject, wait_key`,
        chunk.flatMap((w) => [w.runId, w.stage, w.recipient, w.subject, w.waitKey, w.reason, w.wokenAt]),
      );
      const inserted = new Set(
        rows.map((r) => `${r.run_id}\u0000${r.stage}\u0000${key({ subject: r.subject, waitKey: r.wait_key })}`),
      );
      fresh.push(...chunk.filter((w) => inserted.has(`${w.runId}\u0000${w.stage}\u0000${key(w)}`)));
    }
    return fresh;
  }

  async wakes(runId: string): Promise<Wake[]> {
    const rows = await this.sql.all(
      TABLES.qa_wakes,
      'SELECT * FROM qa_wakes WHERE run_id = ? ORDER BY woken_at, subject',
      [runId],
    );
    return rows.map((r) => ({
      runId: r.run_id,
      stage: r.stage,
      recipient: r.recipient,
      subject: r.subject,
      waitKey: r.wait_key,
      reason: r.reason,
      wokenAt: r.woken_at,
    }));
  }
}
