import { z } from 'zod';
import { allGrouped, type Sql } from '../sql/sql.js';
import { TABLES, type TableRow } from '../tables.js';

// TR33: what a person with write access asked an agent to do, as first read: a review that requests
// changes on a claim PR or a `/yoke fix` on one (kind fix, number: the PR), a `/yoke start` with
// instructions (kind start, number: the issue). An ask is open until a run carries it into its prompt;
// one that starts nothing (from a reader, a bot, the PR's author, or with review fixes off) is declined.

export type AskKind = 'fix' | 'start';
export type AskSource = 'review' | 'command';

/** An inline comment of a review: the file and line it is on, the diff hunk it sits on, and what it says. */
export interface AskComment {
  path: string;
  line: number | null;
  diffHunk: string;
  body: string;
}

export interface Ask {
  id: number;
  repo: string;
  kind: AskKind;
  number: number;
  source: AskSource;
  /** The review's or the comment's GitHub id. */
  sourceId: number;
  author: string;
  /** The head the review was written on (null for a command). */
  headSha: string | null;
  text: string;
  comments: AskComment[];
  askedAt: number;
  /** Why it starts nothing; null when it does. */
  declined: string | null;
  carriedByRun: string | null;
}

export type NewAsk = Omit<Ask, 'id' | 'carriedByRun'>;

/** How an ask is named when a run carries it: by where it came from, so a write that failed is found again. */
export interface AskKey {
  source: AskSource;
  sourceId: number;
}

const Body = z.object({
  text: z.string(),
  comments: z.array(
    z.object({ path: z.string(), line: z.number().nullable(), diffHunk: z.string(), body: z.string() }),
  ),
});

type Row = TableRow<'asks'>;

function toAsk(r: Row): Ask {
  const body = Body.parse(JSON.parse(r.body));
  return {
    id: Number(r.id),
    repo: r.repo,
    kind: r.kind,
    number: Number(r.number),
    source: r.source,
    sourceId: Number(r.source_id),
    author: r.author,
    headSha: r.head_sha,
    text: body.text,
    comments: body.comments,
    askedAt: Number(r.asked_at),
    declined: r.declined,
    carriedByRun: r.carried_by_run,
  };
}

export class AskStore {
  constructor(private readonly sql: Sql) {}

  /** Records an ask as first read; one already recorded from the same review or comment stays as it was. */
  async record(a: NewAsk): Promise<void> {
    await this.sql.run(
      `INSERT INTO asks (repo, kind, number, source, source_id, author, head_sha, body, asked_at, declined)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (repo, source, source_id) DO NOTHING`,
      [
        a.repo,
        a.kind,
        a.number,
        a.source,
        a.sourceId,
        a.author,
        a.headSha,
        JSON.stringify({ text: a.text, comments: a.comments }),
        a.askedAt,
        a.declined,
      ],
    );
  }

  /** Every ask of a repository, oldest first: the open ones, and those already carried or declined (known, so not read again). */
  async listForRepo(repo: string): Promise<Ask[]> {
    return (await this.sql.all(TABLES.asks, 'SELECT * FROM asks WHERE repo = ? ORDER BY asked_at, id', [repo])).map(
      toAsk,
    );
  }

  /** SC01: the asks of each of these repositories, oldest first, by repository. */
  async listForRepos(repos: readonly string[]): Promise<Map<string, Ask[]>> {
    return allGrouped(
      this.sql,
      { shape: TABLES.asks, statement: 'SELECT * FROM asks WHERE repo IN (?) ORDER BY asked_at, id', values: repos },
      {
        keyOf: (r) => r.repo,
        map: toAsk,
      },
    );
  }

  async listCarriedBy(runId: string): Promise<Ask[]> {
    return (
      await this.sql.all(TABLES.asks, 'SELECT * FROM asks WHERE carried_by_run = ? ORDER BY asked_at, id', [runId])
    ).map(toAsk);
  }

  /** A launched run carries these open asks, and says why it started; one write. */
  async carry(runId: string, why: string, keys: readonly AskKey[], repo: string): Promise<void> {
    await this.sql.transaction(async (tx) => {
      await tx.run('UPDATE runs SET why = ? WHERE id = ?', [why, runId]);
      for (const k of keys)
        await tx.run(
          'UPDATE asks SET carried_by_run = ? WHERE repo = ? AND source = ? AND source_id = ? AND carried_by_run IS NULL AND declined IS NULL',
          [runId, repo, k.source, k.sourceId],
        );
    });
  }

  /** A run that never started carried nothing: its asks are open again, for the next run. */
  async reopen(runId: string): Promise<void> {
    await this.sql.run('UPDATE asks SET carried_by_run = NULL WHERE carried_by_run = ?', [runId]);
  }
}
