import { fieldOf } from '../kernel/guards.js';
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { CONFIG_PATH, parseRepoConfig, type RepoConfigResult } from '../config/repo-config.js';
import { CACHE_HIT_HEADER } from './conditional-cache.js';
import type { Octokit } from './octokit.js';
import { GhComment, GhIssue, GhPull, GhPullFile, GhRepositoryInfo, GhReview } from './schemas.js';
import { CONTROL_LABEL, type ClaimView, type IssueView, type RepoName, type RepoRef, type RepoView } from './types.js';

// The read half of the forge: a repository's opt-in file and its open work,
// every GET conditional. An unchanged repository is seen through one probe
// (the most recently updated issue or PR), answered 304 and re-served from
// the last view.

interface CachedView {
  probeEtag: string;
  /** When the view was last read in full, and last confirmed by a probe. */
  at: number;
  probedAt: number;
  /** The newest updated_at the probe saw: the next probe lists everything since, inclusive. */
  since: string | null;
  /** A digest of what that probe listed from `since` on: the same again means nothing changed, even within one second. */
  fingerprint: string;
  view: Omit<RepoView, 'config'>;
}

const ProbeItem = z.object({ number: z.number().optional(), updated_at: z.string().optional() }).passthrough();

/** Every field of every item, in number order: a label added in the same second as the last change still changes it. */
const digestOf = (items: readonly z.output<typeof ProbeItem>[]): string =>
  createHash('sha1')
    .update(JSON.stringify([...items].sort((a, b) => (a.number ?? 0) - (b.number ?? 0))))
    .digest('hex');

const list = <S extends z.ZodType>(schema: S, data: unknown): z.output<S>[] => z.array(schema).parse(data);

export class RepoReader {
  private configs = new Map<RepoName, { at: number; result: RepoConfigResult }>();
  private views = new Map<RepoName, CachedView>();
  /** Per repository, the newest comment update seen: the next read asks for everything since (commands found by poll). */
  private commentsSince = new Map<RepoName, string>();
  /** TR14: the files of a PR at a head never change, so each head's listing is read once. */
  private pullFiles = new Map<string, string[]>();

  constructor(private readonly now: () => number) {}

  invalidate(name: RepoName): void {
    this.configs.delete(name);
    this.views.delete(name);
  }

  /**
   * Comments for commands found by poll: on first sight the newest 100; after
   * that, every comment created or edited since the newest one seen, on as
   * many pages as it takes, so a busy repository loses none.
   */
  private async newComments(o: Octokit, repo: RepoRef): Promise<z.output<typeof GhComment>[]> {
    const at = { owner: repo.owner, repo: repo.name };
    const since = this.commentsSince.get(repo.fullName);
    let comments: z.output<typeof GhComment>[];
    if (since === undefined) {
      const recent = await o.request('GET /repos/{owner}/{repo}/issues/comments', {
        ...at,
        sort: 'created',
        direction: 'desc',
        per_page: 100,
      });
      comments = list(GhComment, recent.data).reverse();
    } else {
      comments = list(
        GhComment,
        await o.paginate('GET /repos/{owner}/{repo}/issues/comments', {
          ...at,
          since,
          sort: 'updated',
          direction: 'asc',
          per_page: 100,
        }),
      );
    }
    const newest = Math.max(...comments.map((c) => c.updatedAt), since ? Date.parse(since) : 0);
    if (newest > 0) this.commentsSince.set(repo.fullName, new Date(newest).toISOString());
    return comments;
  }

  async readConfig(o: Octokit, repo: RepoRef, maxAgeMs: number): Promise<RepoConfigResult> {
    const cached = this.configs.get(repo.fullName);
    if (cached && this.now() - cached.at < maxAgeMs) return cached.result;
    let result: RepoConfigResult;
    try {
      const { config, files } = await o.config.get({ owner: repo.owner, repo: repo.name, path: CONFIG_PATH });
      // TR28: `_extends` brings defaults from the same owner's repositories only, never from anyone else's.
      const foreign = files.find((f) => f.owner.toLowerCase() !== repo.owner.toLowerCase());
      // GH01: the repo's own file opts it in; an organisation's .github repo only supplies defaults.
      if (foreign)
        result = {
          state: 'invalid',
          reason: `${CONFIG_PATH} extends ${foreign.owner}/${foreign.repo} (through _extends): yoke takes settings only from ${repo.owner}'s own repositories; name one of them, or copy the settings in`,
        };
      else result = files[0]?.config == null ? { state: 'absent' } : parseRepoConfig(config);
    } catch (err) {
      const message = err instanceof Error ? err.message.replace('[@probot/octokit-plugin-config] ', '') : String(err);
      result = { state: 'invalid', reason: `${CONFIG_PATH} could not be read: ${message}` };
    }
    this.configs.set(repo.fullName, { at: this.now(), result });
    return result;
  }

  async readRepo(
    o: Octokit,
    repo: RepoRef,
    opts: { claimLabel: string; configMaxAgeMs: number; maxViewAgeMs?: number },
  ): Promise<RepoView> {
    const at = { owner: repo.owner, repo: repo.name };
    const config = await this.readConfig(o, repo, opts.configMaxAgeMs);
    const empty = { repo, defaultBranch: '', config, issues: [], pulls: [], claims: [], recentComments: [] };
    // GH01: a repo without the opt-in file is not read any further.
    if (config.state === 'absent') return empty;
    if (config.state === 'invalid') return { ...empty, issues: await this.controlIssues(o, repo) };
    const cached = this.views.get(repo.fullName);
    // SC02: an idle repository's last view stands in until its next probe is due.
    if (
      cached &&
      opts.maxViewAgeMs &&
      this.now() - cached.probedAt < opts.maxViewAgeMs &&
      this.now() - cached.at < opts.configMaxAgeMs
    ) {
      return { ...cached.view, config };
    }
    // The probe: any comment, label, push or close anywhere in the repo changes it. It lists everything
    // updated since the newest change it saw, inclusive, so a change in that same second is not missed.
    const since = cached?.since;
    const probe = await o.request(
      'GET /repos/{owner}/{repo}/issues',
      since
        ? { ...at, state: 'all', sort: 'updated', direction: 'desc', since, per_page: 100 }
        : { ...at, state: 'all', sort: 'updated', direction: 'desc', per_page: 1 },
    );
    const probeEtag = String(probe.headers.etag ?? '');
    const hit = fieldOf(probe.headers, CACHE_HIT_HEADER) === 'hit';
    const items = z.array(ProbeItem).parse(probe.data);
    const newest =
      items
        .map((i) => i.updated_at)
        .filter((u): u is string => Boolean(u))
        .sort()
        .at(-1) ??
      since ??
      null;
    const fingerprint = digestOf(items);
    const unchanged =
      cached !== undefined && (since ? fingerprint === cached.fingerprint : hit && cached.probeEtag === probeEtag);
    if (cached && unchanged && this.now() - cached.at < opts.configMaxAgeMs) {
      cached.probedAt = this.now();
      return { ...cached.view, config };
    }

    // SC01: a full read's requests go out together; the client's in-flight bound paces them.
    const afkLabel = config.config.afk_label;
    const [defaultBranch, issues, pulls, recentComments] = await Promise.all([
      repo.defaultBranch ??
        o.request('GET /repos/{owner}/{repo}', at).then((r) => GhRepositoryInfo.parse(r.data).default_branch),
      o
        .paginate('GET /repos/{owner}/{repo}/issues', { ...at, state: 'open', labels: afkLabel, per_page: 100 })
        .then((data) =>
          list(GhIssue, data)
            .filter((i) => !i.isPull)
            .map(toIssueView),
        ),
      o
        .paginate('GET /repos/{owner}/{repo}/pulls', { ...at, state: 'open', per_page: 100 })
        .then((data) => list(GhPull, data)),
      this.newComments(o, repo),
    ]);
    const claims: ClaimView[] = await Promise.all(
      pulls
        .filter((pull) => pull.labels.includes(opts.claimLabel) || pull.yokeRun)
        .map(async (pull) => {
          const [comments, reviews, files] = await Promise.all([
            o.paginate('GET /repos/{owner}/{repo}/issues/{issue_number}/comments', {
              ...at,
              issue_number: pull.number,
              per_page: 100,
            }),
            o.paginate('GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews', {
              ...at,
              pull_number: pull.number,
              per_page: 100,
            }),
            this.filesOf(o, repo, pull.number, pull.headSha),
          ]);
          return { pull, comments: list(GhComment, comments), reviews: list(GhReview, reviews), files };
        }),
    );
    const view: Omit<RepoView, 'config'> = {
      repo,
      defaultBranch,
      issues,
      pulls,
      claims,
      recentComments,
    };
    // What a probe from the new `since` would list, so the next one can tell whether anything changed.
    const settled = newest ? items.filter((i) => (i.updated_at ?? '') >= newest) : items;
    this.views.set(repo.fullName, {
      probeEtag,
      at: this.now(),
      probedAt: this.now(),
      since: newest,
      fingerprint: digestOf(settled),
      view,
    });
    return { ...view, config };
  }

  /**
   * The paths a PR's change touches at its head, renames' old paths too. GitHub lists at most 3,000
   * files; a listing that long may be cut, so it is no answer (null), and yoke treats it as protected.
   */
  private async filesOf(o: Octokit, repo: RepoRef, pr: number, head: string): Promise<string[] | null> {
    const key = `${repo.fullName}#${pr}@${head}`;
    const known = this.pullFiles.get(key);
    if (known) return known;
    const listed = list(
      GhPullFile,
      await o.paginate('GET /repos/{owner}/{repo}/pulls/{pull_number}/files', {
        owner: repo.owner,
        repo: repo.name,
        pull_number: pr,
        per_page: 100,
      }),
    );
    if (listed.length >= MAX_LISTED_FILES) return null;
    const files = listed.flat();
    this.pullFiles.set(key, files);
    return files;
  }

  /** The open issue labelled yoke:control, where notices about the repo itself go. */
  private async controlIssues(o: Octokit, repo: RepoRef): Promise<IssueView[]> {
    const { data } = await o.request('GET /repos/{owner}/{repo}/issues', {
      owner: repo.owner,
      repo: repo.name,
      state: 'open',
      labels: CONTROL_LABEL,
      per_page: 1,
    });
    return list(GhIssue, data)
      .filter((i) => !i.isPull)
      .map(toIssueView);
  }
}

/** GitHub's limit on a PR's file listing. */
const MAX_LISTED_FILES = 3000;

const toIssueView = ({ isPull: _pull, ...view }: z.output<typeof GhIssue>): IssueView => view;
