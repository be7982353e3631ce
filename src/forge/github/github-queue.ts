import { fieldOf } from '../../kernel/guards.js';
import { z } from 'zod';
import { classifyGitHubError, unlessMissing } from '../errors.js';
import { commitParents } from './github-git.js';
import type { Octokit } from './octokit.js';
import type { EnqueueResult, MergeGroup, MergeQueueRead, RepoRef } from '../types.js';

// LD04: GitHub's merge queue, as yoke uses it where a ruleset requires it. The PRs in a branch's queue
// (GraphQL: the queue has no REST API), the merge groups GitHub built for them (REST: the
// `gh-readonly-queue/<branch>/pr-<n>-<head>` branches and each group commit's first parent), and adding an
// accepted PR to the queue at the head its lander judged (GraphQL `enqueuePullRequest`).

const at = (repo: RepoRef) => ({ owner: repo.owner, repo: repo.name });

const QUEUE_QUERY = `query($owner: String!, $name: String!, $branch: String!) {
  repository(owner: $owner, name: $name) {
    mergeQueue(branch: $branch) {
      entries(first: 100) { nodes { position pullRequest { number headRefOid } } }
    }
  }
}`;

const QueueAnswer = z.object({
  repository: z
    .object({
      mergeQueue: z
        .object({
          entries: z.object({
            nodes: z.array(
              z.object({
                position: z.number(),
                pullRequest: z.object({ number: z.number(), headRefOid: z.string() }).nullable(),
              }),
            ),
          }),
        })
        .nullable(),
    })
    .nullable(),
});

const PULL_ID_QUERY = `query($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) { pullRequest(number: $number) { id headRefOid } }
}`;

const PullIdAnswer = z.object({
  repository: z.object({ pullRequest: z.object({ id: z.string(), headRefOid: z.string() }).nullable() }).nullable(),
});

const ENQUEUE_MUTATION = `mutation($id: ID!, $head: GitObjectID!) {
  enqueuePullRequest(input: { pullRequestId: $id, expectedHeadOid: $head }) { mergeQueueEntry { position } }
}`;

/** A merge group's branch: `refs/heads/gh-readonly-queue/<branch>/pr-<number>-<head sha>`. */
const GROUP_REF = /^refs\/heads\/gh-readonly-queue\/(.+)\/pr-(\d+)-([0-9a-f]{40})$/;

/** GitHub's answer to a GraphQL document with errors: their messages, as data. */
function graphqlRefusal(err: unknown): { status: number; message: string } | null {
  const errors = fieldOf(err, 'errors');
  if (fieldOf(err, 'name') !== 'GraphqlResponseError' || !Array.isArray(errors)) return null;
  const messages = errors.map((x) => String(fieldOf(x, 'message') ?? 'GitHub refused'));
  return { status: 422, message: messages.join('; ') };
}

/**
 * LD04: the queue on `branch`: its PRs in order, and the merge groups GitHub built (each group's commit, the
 * commit it was built on, and the PR and head it ends with). Null when the branch has no queue GitHub shows.
 * `parents` remembers the first parent of each group commit read before (commits never change).
 */
export async function readMergeQueue(
  o: Octokit,
  repo: RepoRef,
  branch: string,
  parents: Map<string, string>,
): Promise<MergeQueueRead | null> {
  const answer = QueueAnswer.parse(await o.graphql(QUEUE_QUERY, { owner: repo.owner, name: repo.name, branch }));
  const queue = answer.repository?.mergeQueue;
  if (!queue) return null;
  const entries = queue.entries.nodes
    .filter((n) => n.pullRequest !== null)
    .sort((a, b) => a.position - b.position)
    .map((n) => ({ pr: n.pullRequest!.number, headSha: n.pullRequest!.headRefOid }));
  const refs = await unlessMissing(() =>
    o.request('GET /repos/{owner}/{repo}/git/matching-refs/{ref}', {
      ...at(repo),
      ref: `heads/gh-readonly-queue/${branch}/`,
    }),
  );
  const groups: MergeGroup[] = [];
  for (const ref of z
    .array(z.object({ ref: z.string(), object: z.object({ sha: z.string() }) }))
    .parse(refs?.data ?? [])) {
    const m = GROUP_REF.exec(ref.ref);
    if (!m || m[1] !== branch) continue;
    const sha = ref.object.sha;
    let parent = parents.get(sha);
    if (parent === undefined) {
      // A group GitHub destroyed between the two reads: gone, so not a group.
      parent = (await commitParents(o, repo, sha))?.[0];
      if (!parent) continue;
      parents.set(sha, parent);
    }
    groups.push({ pr: Number(m[2]), headSha: m[3]!, sha, parent });
  }
  return { entries, groups };
}

/**
 * LD04: adds a PR to its base branch's merge queue, only while its head is `headSha` (the head its lander
 * accepted): GitHub refuses otherwise. A refusal (no such PR, a moved head, a permission not granted, a PR
 * the queue will not take) comes back as data.
 */
export async function enqueuePullRequest(
  o: Octokit,
  repo: RepoRef,
  number: number,
  headSha: string,
): Promise<EnqueueResult> {
  try {
    const pull = PullIdAnswer.parse(await o.graphql(PULL_ID_QUERY, { owner: repo.owner, name: repo.name, number }))
      .repository?.pullRequest;
    if (!pull) return { ok: false, status: 404, message: `#${number} is not a pull request here` };
    await o.graphql(ENQUEUE_MUTATION, { id: pull.id, head: headSha });
    return { ok: true };
  } catch (err) {
    const refused = graphqlRefusal(err);
    if (refused) return { ok: false, ...refused };
    const e = classifyGitHubError(err);
    if (e.kind !== 'fault') return { ok: false, status: e.status!, message: e.message };
    throw err;
  }
}
