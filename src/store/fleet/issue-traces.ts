import type { Sql } from '../sql/sql.js';
import { pick } from '../sql/columns.js';
import { TABLES } from '../tables.js';

// Each AFK issue's trace, as its label opened it: the trace id and the span every later span of the issue
// names as its parent. The first to record an issue's trace keeps it (a webhook and a poll may both see the label).

export interface IssueTrace {
  traceId: string;
  spanId: string;
}

export class IssueTraceStore {
  constructor(private readonly sql: Sql) {}

  async get(repo: string, issue: number): Promise<IssueTrace | null> {
    const row = await this.sql.get(
      pick(TABLES.issue_traces, 'trace_id', 'span_id'),
      'SELECT trace_id, span_id FROM issue_traces WHERE repo = ? AND issue_number = ?',
      [repo, issue],
    );
    return row ? { traceId: row.trace_id, spanId: row.span_id } : null;
  }

  /** Records the issue's trace unless one is recorded already; answers the one that stands. */
  async record(repo: string, issue: number, t: IssueTrace, at: number): Promise<IssueTrace> {
    await this.sql.run(
      'INSERT INTO issue_traces (repo, issue_number, trace_id, span_id, at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (repo, issue_number) DO NOTHING',
      [repo, issue, t.traceId, t.spanId, at],
    );
    return (await this.get(repo, issue)) ?? t;
  }
}
