import { z } from 'zod';
import { parseClosingRefs } from '../body-text.js';

// What the runner reads of GitHub before an agent starts: the issue and its
// comments, or the claim PR a fix works on. It holds the job's read-only
// GITHUB_TOKEN; nothing here writes. Each commenter's permission is asked
// once, so that text from people without write access never reads as an
// instruction.

const User = z.object({ login: z.string(), type: z.string().optional() });
const Issue = z.object({
  number: z.number(),
  title: z.string(),
  body: z.string().nullable(),
  user: User.nullable(),
  pull_request: z.unknown().optional(),
});
const Comment = z.object({ id: z.number(), body: z.string().nullable(), user: User.nullable() });
const Pull = z.object({
  number: z.number(),
  title: z.string(),
  body: z.string().nullable(),
  head: z.object({ ref: z.string(), sha: z.string() }),
});
const Permission = z.object({ permission: z.string() });

export interface WorkComment {
  author: string;
  body: string;
  trusted: boolean;
}

export interface IssueWork {
  number: number;
  title: string;
  body: string;
  author: string;
  authorTrusted: boolean;
  comments: WorkComment[];
}

export interface PullWork {
  number: number;
  title: string;
  body: string;
  branch: string;
  headSha: string;
  closes: number[];
}

export interface WorkReaderOptions {
  apiUrl: string;
  token: string;
  repo: string;
  fetch?: typeof fetch;
}

export class WorkReaderError extends Error {}

export class WorkReader {
  private perms = new Map<string, boolean>();
  constructor(private readonly opts: WorkReaderOptions) {}

  private async get<T>(path: string, schema: z.ZodType<T>): Promise<T> {
    const res = await (this.opts.fetch ?? fetch)(`${this.opts.apiUrl.replace(/\/+$/, '')}${path}`, {
      headers: {
        authorization: `token ${this.opts.token}`,
        accept: 'application/vnd.github+json',
        'x-github-api-version': '2022-11-28',
      },
    });
    if (!res.ok) {
      const hint =
        res.status === 401 || res.status === 403 || res.status === 404
          ? ' (does the job grant `issues: read` and `pull-requests: read`?)'
          : '';
      throw new WorkReaderError(`GET ${path} answered ${res.status}${hint}`);
    }
    const parsed = schema.safeParse(await res.json());
    if (!parsed.success)
      throw new WorkReaderError(
        `GET ${path} answered something that is not GitHub's shape: ${parsed.error.issues[0]?.message}`,
      );
    return parsed.data;
  }

  /** Write access or more. */
  async isWriter(login: string): Promise<boolean> {
    let known = this.perms.get(login);
    if (known === undefined) {
      try {
        const p = await this.get(
          `/repos/${this.opts.repo}/collaborators/${encodeURIComponent(login)}/permission`,
          Permission,
        );
        known = p.permission === 'admin' || p.permission === 'write' || p.permission === 'maintain';
      } catch {
        known = false;
      }
      this.perms.set(login, known);
    }
    return known;
  }

  async issue(number: number): Promise<IssueWork> {
    const i = await this.get(`/repos/${this.opts.repo}/issues/${number}`, Issue);
    const comments: WorkComment[] = [];
    for (let page = 1; page <= 10; page++) {
      const batch = await this.get(
        `/repos/${this.opts.repo}/issues/${number}/comments?per_page=100&page=${page}`,
        z.array(Comment),
      );
      for (const c of batch) {
        const author = c.user?.login ?? 'ghost';
        // Bots (yoke's own replies among them) are not people whose words steer the agent.
        if (c.user?.type === 'Bot' || author.endsWith('[bot]')) continue;
        comments.push({ author, body: c.body ?? '', trusted: await this.isWriter(author) });
      }
      if (batch.length < 100) break;
    }
    const author = i.user?.login ?? 'ghost';
    return {
      number: i.number,
      title: i.title,
      body: i.body ?? '',
      author,
      authorTrusted: await this.isWriter(author),
      comments,
    };
  }

  async pull(number: number): Promise<PullWork> {
    const p = await this.get(`/repos/${this.opts.repo}/pulls/${number}`, Pull);
    return {
      number: p.number,
      title: p.title,
      body: p.body ?? '',
      branch: p.head.ref,
      headSha: p.head.sha,
      closes: parseClosingRefs(p.body ?? ''),
    };
  }
}
