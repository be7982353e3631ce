import { createHmac, randomUUID } from 'node:crypto';
import { git } from '../git.js';
import type { Shapes } from './shapes.js';
import type { ForgeEvent, ForgeRepo, ForgeUser } from './state.js';

// Webhook deliveries, signed as GitHub signs them, fire and forget: a
// delivery that fails is dropped, and yoke's poll catches up.

export interface Delivery {
  id: string;
  event: string;
  action: string;
  status: number;
  /** The exact bytes sent and their signature, so a test can replay a delivery as an attacker would. */
  payload: string;
  signature: string;
}

export class WebhookSender {
  target: { url: string; secret: string } | null = null;
  readonly deliveries: Delivery[] = [];

  constructor(
    private readonly shapes: Shapes,
    /** An installation as GitHub shows it: its installation events carry the whole of it. */
    private readonly installation: (id: number) => object,
  ) {}

  /** The payload GitHub would send for a change in the forge's state. */
  fromEvent(e: ForgeEvent): void {
    const { shapes } = this;
    switch (e.kind) {
      case 'comment_created':
        return this.send('issue_comment', 'created', e.repo, e.sender, {
          issue: shapes.issueJson(e.repo, e.issue),
          comment: shapes.commentJson(e.repo, e.comment),
        });
      case 'comment_edited':
        return this.send('issue_comment', 'edited', e.repo, e.sender, {
          issue: shapes.issueJson(e.repo, e.issue),
          comment: shapes.commentJson(e.repo, e.comment),
          changes: {},
        });
      case 'push':
        return this.send('push', '', e.repo, e.sender, {
          ref: e.ref,
          before: e.before ?? '0'.repeat(40),
          after: e.after,
          commits: e.commits.map((c) => ({ id: c.id, added: c.added, modified: c.modified, removed: c.removed })),
          pusher: { name: e.sender.login },
        });
      case 'pull_opened':
        return this.send('pull_request', 'opened', e.repo, e.sender, {
          number: e.issue.number,
          pull_request: shapes.pullJson(e.repo, e.issue),
        });
      case 'review_submitted':
        return this.send('pull_request_review', 'submitted', e.repo, e.sender, {
          review: shapes.reviewJson(e.repo, e.review),
          pull_request: shapes.pullJson(e.repo, e.issue),
        });
      case 'merge_group': {
        // As GitHub sends it: the group's commit, its branch, the commit it was built on, and the branch it lands on.
        const message = git(e.repo.gitDir, ['show', '-s', '--format=%B', e.group.headSha]).trimEnd();
        const [tree, when, name, email] = git(e.repo.gitDir, [
          'show',
          '-s',
          '--format=%T%n%aI%n%an%n%ae',
          e.group.headSha,
        ]).split('\n') as [string, string, string, string];
        return this.send('merge_group', e.action, e.repo, e.sender, {
          ...(e.group.reason ? { reason: e.group.reason } : {}),
          merge_group: {
            head_sha: e.group.headSha,
            head_ref: e.group.headRef,
            base_sha: e.group.baseSha,
            base_ref: `refs/heads/${e.group.branch}`,
            head_commit: {
              id: e.group.headSha,
              tree_id: tree,
              message,
              timestamp: when,
              author: { name, email },
              committer: { name, email },
            },
          },
        });
      }
      case 'repositories_added':
        // As GitHub sends it: the installation's event, naming no one repository.
        return this.sendAs('installation_repositories', 'added', this.installation(e.installationId), e.sender, {
          repository_selection: 'selected',
          repositories_added: e.repos.map((r) => ({
            id: r.id,
            node_id: `R_${r.id}`,
            name: r.fullName.split('/')[1],
            full_name: r.fullName,
            private: false,
          })),
          repositories_removed: [],
          requester: null,
        });
      case 'labeled':
        if (e.issue.pull) {
          return this.send('pull_request', 'labeled', e.repo, e.sender, {
            number: e.issue.number,
            pull_request: shapes.pullJson(e.repo, e.issue),
            label: shapes.labelJson(e.repo, e.label),
          });
        }
        return this.send('issues', 'labeled', e.repo, e.sender, {
          issue: shapes.issueJson(e.repo, e.issue),
          label: shapes.labelJson(e.repo, e.label),
        });
    }
  }

  send(event: string, action: string, repo: ForgeRepo, sender: ForgeUser, fields: Record<string, unknown>): void {
    const installation = { id: repo.installationId, node_id: `IN_${repo.installationId}` };
    this.sendAs(event, action, installation, sender, { ...fields, repository: this.shapes.repoJson(repo) });
  }

  /** A delivery to the app's installation, with these fields. */
  private sendAs(
    event: string,
    action: string,
    installation: object,
    sender: ForgeUser,
    fields: Record<string, unknown>,
  ): void {
    const hook = this.target;
    if (!hook) return;
    // A push has no action; every other event names one.
    const payload = JSON.stringify({
      ...(action ? { action } : {}),
      ...fields,
      installation,
      sender: this.shapes.simpleUser(sender),
    });
    const id = randomUUID();
    const signature = `sha256=${createHmac('sha256', hook.secret).update(payload).digest('hex')}`;
    const record: Delivery = { id, event, action, status: 0, payload, signature };
    this.deliveries.push(record);
    fetch(hook.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': event,
        'x-github-delivery': id,
        'x-hub-signature-256': signature,
        'user-agent': 'GitHub-Hookshot/yoke-sandbox',
      },
      body: payload,
    }).then(
      (res) => (record.status = res.status),
      () => (record.status = -1),
    );
  }
}
