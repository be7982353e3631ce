import { createHash } from 'node:crypto';
import { dueSince, secondBefore } from '../../kernel/spread.js';
import { Listings } from './listings.js';
import { z } from 'zod';
import { CONFIG_PATH, parseRepoConfig, type RepoConfigResult } from '../../config/repo-config.js';
import type { Octokit } from './octokit.js';
import { GhComment, GhIssue, GhPull, GhPullFile, GhRepositoryInfo, GhReview } from './schemas.js';
import { CONTROL_LABEL, type ClaimView, type IssueView, type RepoName, type RepoRef, type RepoView } from '../types.js';

// The read half of the forge: a repository's opt-in file and its open work, every GET conditional. An
// unchanged repository is seen through one probe (what changed since the last one), re-served from the last view.

interface CachedView {
  /** When the view was last read in full or confirmed by a probe. */
  probedAt: number;
  /** The newest updated_at the probe saw (or GitHub's date on the first read): the next probe lists everything since, inclusive. */
  since: string;
  /** A digest of what that probe listed from `since` on: the same again means nothing changed, even within one second. */
  fingerprint: string;
  /** The AFK label the view's issues were listed by: another one in the opt-in file means a full read. */
  afkLabel: string;
  view: Omit<RepoView, 'config'>;
}

/** An opt-in file as last read: when, at which push of the repository, and whether it takes defaults from another. */
interface CachedConfig {
  at: number;
  /** The repository's `pushed_at` when it was read (from the installation's listing), if known. */
  pushedAt: string | undefined;
  /** It `_extends` another repository's file, whose pushes this repository's `pushed_at` does not show. */
  extends: boolean;
  result: RepoConfigResult;
}

/** How many refresh periods an opt-in file watched by its repository's `pushed_at` stands (six hours by default). */
export const WATCHED_REFRESH_FACTOR = 36;

const ProbeItem = z.object({ number: z.number().optional(), updated_at: z.string().optional() }).passthrough();

/** Every field of every item, in number order: a label added in the same second as the last change still changes it. */
const digestOf = (items: readonly z.output<typeof ProbeItem>[]): string =>
  createHash('sha1')
    .update(JSON.stringify([...items].sort((a, b) => (a.number ?? 0) - (b.number ?? 0))))
    .digest('hex');

const list = <S extends z.ZodType>(schema: S, data: unknown): z.output<S>[] => z.array(schema).parse(data);

export class RepoReader {
  private configs = new Map<RepoName, CachedConfig>();
  /** Each repository's `pushed_at` as the installation's newest listing gave it. */
  private pushed = new Map<RepoName, string>();
  private views = new Map<RepoName, CachedView>();
  readonly listings: Listings;
  /** Per repository, the newest comment update seen: the next read asks for everything since (commands found by poll). */
  private commentsSince = new Map<RepoName, string>();
  /** TR14: the files of a PR at a head never change, so each head's listing is read once. */
  private pullFiles = new Map<string, string[]>();

  constructor(private readonly now: () => number) {
    this.listings = new Listings(now);
  }

  /** The installation's listing was read: a repository pushed to since its opt-in file was read reads it again. */
  listed(repos: readonly RepoRef[], installationId: number): void {
    for (const r of repos) if (r.pushedAt) this.pushed.set(r.fullName, r.pushedAt);
    this.listings.keep(installationId, repos);
  }

  /**
   * SC02: an opt-in file stands until it may have changed: the repository was pushed to since (the listing's
   * `pushed_at`, or a push webhook naming it: invalidate), or, for a file yoke cannot watch that way (one that
   * `_extends` another repository's, one that could not be read, a server that lists no `pushed_at`), its
   * repository's slot of the refresh period came round.
   */
  private configFresh(name: RepoName, cached: CachedConfig, maxAgeMs: number): boolean {
    const pushed = this.pushed.get(name);
    const watched =
      pushed !== undefined && cached.pushedAt !== undefined && !cached.extends && cached.result.state !== 'invalid';
    if (watched && pushed !== cached.pushedAt) return false;
    // A watched file is read again on its slot of a longer period too: two pushes in one second share a `pushed_at`.
    const period = watched ? maxAgeMs * WATCHED_REFRESH_FACTOR : maxAgeMs;
    return !dueSince(name, cached.at, this.now(), period) && this.now() - cached.at < period;
  }

  /** Whether readRepo would answer now from what it holds, with no request: SC03 reads it whatever the budget. */
  standsIn(repo: RepoRef, opts: { maxViewAgeMs: number; configMaxAgeMs: number }): boolean {
    const config = this.configs.get(repo.fullName);
    if (!config || !this.configFresh(repo.fullName, config, opts.configMaxAgeMs)) return false;
    if (config.result.state !== 'valid') return config.result.state === 'absent';
    const view = this.views.get(repo.fullName);
    return (
      view !== undefined &&
      view.afkLabel === config.result.config.afk_label &&
      this.viewStands(repo, view, opts.maxViewAgeMs)
    );
  }

  /** Whether the repository's opt-in file was read and is kept, however old (a webhook's invalidate forgets it). */
  everRead(repo: RepoRef): boolean {
    return this.configs.has(repo.fullName);
  }

  /** SC02: an idle repository's last view stands in until its slot of the probe period comes round. */
  private viewStands(repo: RepoRef, view: CachedView, maxViewAgeMs: number | undefined): boolean {
    return (
      maxViewAgeMs !== undefined &&
      maxViewAgeMs > 0 &&
      this.now() - view.probedAt < maxViewAgeMs &&
      !dueSince(repo.fullName, view.probedAt, this.now(), maxViewAgeMs)
    );
  }

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
    if (cached && this.configFresh(repo.fullName, cached, maxAgeMs)) return cached.result;
    const pushedAt = this.pushed.get(repo.fullName);
    let result: RepoConfigResult;
    let extended = false;
    try {
      const { config, files } = await o.config.get({ owner: repo.owner, repo: repo.name, path: CONFIG_PATH });
      // TR28: `_extends` brings defaults from the same owner's repositories only, never from anyone else's.
      const foreign = files.find((f) => f.owner.toLowerCase() !== repo.owner.toLowerCase());
      extended = files.length > 1;
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
    this.configs.set(repo.fullName, { at: this.now(), pushedAt, extends: extended, result });
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
    const afkLabel = config.config.afk_label;
    const known = this.views.get(repo.fullName);
    // A view listed by another AFK label is no view of this configuration.
    const cached = known?.afkLabel === afkLabel ? known : undefined;
    if (cached && this.viewStands(repo, cached, opts.maxViewAgeMs)) return { ...cached.view, config };
    // A repository never read has nothing to compare with: it is read in full at once, without a probe.
    let probed: { since: string; settled: string } | null = null;
    if (cached) {
      const found = await this.probe(o, repo, cached);
      if (found === 'unchanged') return { ...cached.view, config };
      probed = found;
    }

    // SC01: a full read's requests go out together; the client's in-flight bound paces them.
    const [defaultBranch, labelled, pulls, recentComments] = await Promise.all([
      repo.defaultBranch ??
        o.request('GET /repos/{owner}/{repo}', at).then((r) => GhRepositoryInfo.parse(r.data).default_branch),
      this.labelledIssues(o, repo, afkLabel),
      o
        .paginate('GET /repos/{owner}/{repo}/pulls', { ...at, state: 'open', per_page: 100 })
        .then((data) => list(GhPull, data)),
      this.newComments(o, repo),
    ]);
    const { issues, firstAnswer } = labelled;
    const claims = await Promise.all(
      pulls
        .filter((pull) => pull.labels.includes(opts.claimLabel) || pull.yokeRun)
        .map((pull) => this.claimOf(o, repo, pull)),
    );
    const view: Omit<RepoView, 'config'> = {
      repo,
      defaultBranch,
      issues,
      pulls,
      claims,
      recentComments,
    };
    // Never probed: the next probe lists what changed since GitHub answered this read (a second back), and
    // finds nothing if nothing did. Without GitHub's date, five minutes back by yoke's clock.
    const since =
      probed?.since ?? firstAnswer ?? new Date(this.now() - 300_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    this.views.set(repo.fullName, {
      probedAt: this.now(),
      since,
      // What a probe from `since` lists when nothing changed: nothing at all.
      fingerprint: probed?.settled ?? digestOf([]),
      afkLabel,
      view,
    });
    return { ...view, config };
  }

  /** The open issues with the AFK label, and GitHub's date on the first page (where the next probe starts). */
  private async labelledIssues(
    o: Octokit,
    repo: RepoRef,
    label: string,
  ): Promise<{ issues: IssueView[]; firstAnswer: string | null }> {
    const asked = { owner: repo.owner, repo: repo.name, state: 'open', labels: label, per_page: 100 } as const;
    const first = await o.request('GET /repos/{owner}/{repo}/issues', asked);
    const all = first.headers.link?.includes('rel="next"')
      ? await o.paginate('GET /repos/{owner}/{repo}/issues', asked)
      : first.data;
    const issues = list(GhIssue, all)
      .filter((i) => !i.isPull)
      .map(toIssueView);
    return { issues, firstAnswer: secondBefore(first.headers.date) };
  }

  /** A claim PR's conversation, reviews and files (each head's files read once). */
  private async claimOf(o: Octokit, repo: RepoRef, pull: z.output<typeof GhPull>): Promise<ClaimView> {
    const at = { owner: repo.owner, repo: repo.name };
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
  }

  /**
   * The probe: any comment, label, push or close anywhere in the repo changes it. It lists everything updated
   * since the newest change it saw, inclusive, so a change in that same second is not missed; the same listing
   * again means nothing changed. Otherwise: where the next probe starts, and what it will list if nothing changes.
   */
  private async probe(
    o: Octokit,
    repo: RepoRef,
    cached: CachedView,
  ): Promise<'unchanged' | { since: string; settled: string }> {
    const { since } = cached;
    const probe = await o.request('GET /repos/{owner}/{repo}/issues', {
      owner: repo.owner,
      repo: repo.name,
      state: 'all',
      sort: 'updated',
      direction: 'desc',
      since,
      per_page: 100,
    });
    const items = z.array(ProbeItem).parse(probe.data);
    if (digestOf(items) === cached.fingerprint) {
      cached.probedAt = this.now();
      return 'unchanged';
    }
    const stamps = items.flatMap((i) => (i.updated_at ? [i.updated_at] : [])).sort();
    const newest = stamps.at(-1) ?? since;
    return { since: newest, settled: digestOf(items.filter((i) => (i.updated_at ?? '') >= newest)) };
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
