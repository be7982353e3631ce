import { z } from 'zod';
import type { CommentView, RepoRef } from '../forge/types.js';

// The few fields of GitHub's webhook payloads yoke reads, parsed where they
// enter and turned into yoke's own shapes in one step.

const Repository = z.object({
  name: z.string(),
  full_name: z.string(),
  owner: z.object({ login: z.string() }),
  default_branch: z.string().optional(),
});
const Installation = z.object({ id: z.number() });
const User = z.object({ login: z.string(), type: z.string().optional() }).nullable().optional();

const toRepoRef = (repository: z.infer<typeof Repository>, installation: z.infer<typeof Installation>): RepoRef => ({
  owner: repository.owner.login,
  name: repository.name,
  fullName: repository.full_name,
  installationId: installation.id,
});

export const IssueCommentPayload = z
  .object({
    repository: Repository,
    installation: Installation,
    issue: z.object({ number: z.number(), pull_request: z.unknown().optional() }),
    comment: z.object({
      id: z.number(),
      body: z.string().nullable().optional(),
      user: User,
      created_at: z.string(),
      updated_at: z.string().optional(),
    }),
  })
  .transform((p): { repo: RepoRef; comment: CommentView } => ({
    repo: toRepoRef(p.repository, p.installation),
    comment: {
      id: p.comment.id,
      issueNumber: p.issue.number,
      isPull: p.issue.pull_request != null,
      author: p.comment.user?.login ?? 'ghost',
      authorIsBot: p.comment.user?.type === 'Bot',
      body: p.comment.body ?? '',
      createdAt: Date.parse(p.comment.created_at),
      updatedAt: Date.parse(p.comment.updated_at ?? p.comment.created_at),
    },
  }));
export type IssueCommentPayload = z.infer<typeof IssueCommentPayload>;

const Commit = z.object({
  added: z.array(z.string()).optional(),
  modified: z.array(z.string()).optional(),
  removed: z.array(z.string()).optional(),
});

export const PushPayload = z
  .object({
    ref: z.string(),
    repository: Repository,
    commits: z.array(Commit).optional().default([]),
  })
  .transform((p) => ({
    repo: p.repository.full_name,
    toDefaultBranch: p.repository.default_branch !== undefined && p.ref === `refs/heads/${p.repository.default_branch}`,
    commits: p.commits,
  }));
export type PushPayload = z.infer<typeof PushPayload>;

/** SC10: the installation an installation event is about (its repositories were added or removed, or it was made). */
export const InstallationPayload = z.object({ installation: Installation }).transform((p) => p.installation.id);

/** SC10: the repository a webhook is about, and the installation that reads it. */
export const RepoOfInstallationPayload = z
  .object({ repository: z.object({ full_name: z.string() }), installation: Installation })
  .transform((p) => ({ repo: p.repository.full_name, installationId: p.installation.id }));

/** The repository a webhook is about, by full name (installation events have none). */
export const RepoNamePayload = z
  .object({ repository: z.object({ full_name: z.string() }) })
  .transform((p) => p.repository.full_name);

/** An edited comment: which repository, and whether a person (not a bot) edited it. */
export const CommentEditedPayload = z
  .object({ repository: z.object({ full_name: z.string() }), sender: z.object({ type: z.string() }) })
  .transform((p) => ({ repo: p.repository.full_name, byBot: p.sender.type === 'Bot' }));

/** An issue labelled `qa:<plan>`: who labelled which issue with what. */
export const IssueLabeledPayload = z
  .object({
    repository: Repository,
    installation: Installation,
    issue: z.object({ number: z.number(), pull_request: z.unknown().optional() }),
    label: z.object({ name: z.string() }),
    sender: User,
  })
  .transform((p) => ({
    repo: toRepoRef(p.repository, p.installation),
    issueNumber: p.issue.number,
    isPull: p.issue.pull_request != null,
    label: p.label.name,
    sender: p.sender?.login ?? 'ghost',
    senderIsBot: p.sender?.type === 'Bot',
  }));
export type IssueLabeledPayload = z.infer<typeof IssueLabeledPayload>;

/** GitHub's callback for a waiting workflow run: `…/repos/OWNER/REPO/actions/runs/ID/deployment_protection_rule` (after `/api/v3` on a GitHub Enterprise host). */
const CALLBACK_PATH = /^(?:\/api\/v3)?\/repos\/([^/]+)\/([^/]+)\/actions\/runs\/(\d+)\/deployment_protection_rule$/;

/** The workflow run a callback URL names, only when it is a run of this very repository; else null. */
export function callbackRunOf(url: string, repo: RepoRef): number | null {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return null;
  }
  const m = CALLBACK_PATH.exec(path);
  if (!m || m[1]!.toLowerCase() !== repo.owner.toLowerCase() || m[2]!.toLowerCase() !== repo.name.toLowerCase())
    return null;
  return Number(m[3]);
}

/** DP03: a `deployment_protection_rule.requested` event. yoke answers through its own API client at the run the URL names, never by posting to the URL. */
export const ProtectionRulePayload = z
  .object({
    action: z.literal('requested'),
    environment: z.string().min(1),
    event: z.string().optional(),
    deployment_callback_url: z.string(),
    deployment: z
      .object({ sha: z.string().regex(/^[0-9a-f]{40}$/) })
      .nullable()
      .optional(),
    repository: Repository,
    installation: Installation,
    sender: User,
  })
  .transform((p) => {
    const repo = toRepoRef(p.repository, p.installation);
    return {
      repo,
      environment: p.environment,
      sha: p.deployment?.sha ?? null,
      workflowRunId: callbackRunOf(p.deployment_callback_url, repo),
      sender: p.sender?.login ?? null,
      event: p.event ?? null,
      callbackUrl: p.deployment_callback_url,
    };
  });
