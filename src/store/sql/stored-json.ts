// The shapes of what yoke keeps as JSON in a text column (their tables declare them with jsonOf, tables-*.ts).

/** What a pass last read of a repository: its opt-in file as yoke parsed it, and its open claim PRs. */
export interface RepoRead {
  readAt: number;
  /** The parsed opt-in file (defaults filled in), or null when it was absent or refused. */
  settings: unknown;
  /** LD02: with each claim, where its base branch was (absent in reads from before yoke kept it). */
  openClaims: {
    number: number;
    title: string;
    headSha: string;
    author: string;
    baseSha?: string | null;
    /** LD04: where GitHub's merge queue is required: whether it is queued at this head, and its merge group's commit. */
    mergeQueue?: { queued: boolean; group: string | null } | null;
  }[];
}

/** A stage's wait as the run's last gate check recorded it. */
export interface StoredWait {
  key: string;
  code: string;
  recipient: string;
  subject: string;
  detail: string;
  command: string;
}
