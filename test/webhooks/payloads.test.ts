import { describe, expect, it } from 'vitest';
import { touchesOptInFile } from '../../src/config/repo-config.js';
import { IssueCommentPayload, PushPayload } from '../../src/webhooks/payloads.js';
import { publishedPayload } from '../helpers/probot.js';

// The pure mappers from GitHub's published webhook payloads to yoke's shapes.

describe('webhook payloads', () => {
  it('GH04 maps a published issue_comment.created payload to the comment yoke handles', () => {
    const payload = publishedPayload('issue_comment', 'created');
    const parsed = IssueCommentPayload.parse(payload);
    expect(parsed.repo).toEqual({
      owner: 'Codertocat',
      name: 'Hello-World',
      fullName: 'Codertocat/Hello-World',
      installationId: payload.installation.id,
    });
    expect(parsed.comment).toEqual({
      id: payload.comment.id,
      issueNumber: payload.issue.number,
      isPull: false,
      author: payload.comment.user.login,
      authorIsBot: false,
      body: payload.comment.body,
      createdAt: Date.parse(payload.comment.created_at),
      updatedAt: Date.parse(payload.comment.updated_at),
    });
  });

  it('refuses a comment payload without the fields yoke reads, as data', () => {
    const payload = publishedPayload('issue_comment', 'created');
    delete payload.comment.user;
    delete payload.comment.id;
    const parsed = IssueCommentPayload.safeParse(payload);
    expect(parsed.success).toBe(false);
    expect(parsed.error!.issues.map((i) => i.path.join('.'))).toEqual(['comment.id']);
  });

  it('GH01 a push to the default branch that touches .github/yoke.yml is told apart from one that does not', () => {
    const payload = publishedPayload('push');
    const parsed = PushPayload.parse(payload);
    expect(parsed.repo).toBe('Codertocat/Hello-World');
    expect(parsed.toDefaultBranch).toBe(payload.ref === `refs/heads/${payload.repository.default_branch}`);
    expect(touchesOptInFile(parsed.commits)).toBe(false);
    expect(touchesOptInFile([...parsed.commits, { added: [], modified: ['.github/yoke.yml'], removed: [] }])).toBe(
      true,
    );
    expect(touchesOptInFile([{ removed: ['.github/yoke.yml'] }])).toBe(true);
    expect(touchesOptInFile([{ modified: ['.github/yoke.yaml', 'yoke.yml'] }])).toBe(false);
  });
});
