import { decodeMarker } from '../src/forge/marker.js';
import type { DemoReview, DemoTask } from './demo-repo.js';
import type { ForgeEvent } from './forge/records.js';

// The demo's maintainer at work on a claim PR (TR33): on the PR of a task with a review, they request
// changes with two inline comments as soon as it opens; once yoke's lander accepts a newer head, they
// approve it, and yoke merges. They act through the forge's REST API, with their own token, as a person
// would; what they did is kept for the end table.

export interface MaintainerDeps {
  forgeUrl: string;
  repo: string;
  token: string;
  tasks: readonly DemoTask[];
  /** yoke's bot, whose verdict markers the maintainer reads. */
  botLogin: string;
}

export class DemoMaintainer {
  /** What they did, in order: `requested changes on #8 at abc1234`, `approved #8 at def5678`. */
  readonly did: string[] = [];
  /** What the forge refused them (a test asserts there is none). */
  readonly refused: string[] = [];
  private readonly reviewed = new Map<number, string>();
  private readonly approved = new Set<number>();

  constructor(private readonly deps: MaintainerDeps) {}

  watch(e: ForgeEvent): void {
    if (!('repo' in e) || e.repo.fullName !== this.deps.repo) return;
    if (e.kind === 'pull_opened' && e.issue.pull) {
      const issue = Number(/Closes #(\d+)/.exec(e.issue.body)?.[1]);
      const review = this.deps.tasks[issue - 1]?.review;
      if (!review || this.reviewed.has(e.issue.number)) return;
      const head = e.issue.pull.headSha;
      this.reviewed.set(e.issue.number, head);
      void this.send(e.issue.number, { commit_id: head, event: 'REQUEST_CHANGES', ...review }, () =>
        this.did.push(`requested changes on #${e.issue.number} at ${head.slice(0, 7)}`),
      );
    }
    if (e.kind === 'comment_created' && e.sender.login === this.deps.botLogin) {
      const reviewedAt = this.reviewed.get(e.issue.number);
      const marker = decodeMarker(e.comment.body);
      if (!reviewedAt || this.approved.has(e.issue.number) || marker.kind !== 'marker') return;
      const { verdict, sha } = marker.payload;
      if (verdict !== 'accept' || sha === reviewedAt) return;
      this.approved.add(e.issue.number);
      void this.send(e.issue.number, { commit_id: sha, event: 'APPROVE', body: 'Thanks, that is it.' }, () =>
        this.did.push(`approved #${e.issue.number} at ${sha.slice(0, 7)}`),
      );
    }
  }

  private async send(pr: number, review: Record<string, unknown>, done: () => void): Promise<void> {
    const body = {
      ...review,
      comments: (review.comments as DemoReview['comments'] | undefined)?.map((c) => ({
        path: c.path,
        line: c.line,
        side: 'RIGHT',
        body: c.body,
      })),
    };
    try {
      const res = await fetch(`${this.deps.forgeUrl}/api/v3/repos/${this.deps.repo}/pulls/${pr}/reviews`, {
        method: 'POST',
        headers: { authorization: `token ${this.deps.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.ok) done();
      else this.refused.push(`#${pr}: ${res.status} ${await res.text()}`);
    } catch (err) {
      this.refused.push(`#${pr}: ${String(err)}`);
    }
  }
}
