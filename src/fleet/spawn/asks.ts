import type { ClaimView, Forge, RepoRef, ReviewView } from '../../forge/types.js';
import type { RepoFacts } from '../repo-facts.js';
import { canWrite } from '../../kernel/permission.js';
import type { Ask, AskKey, NewAsk } from '../../store/fleet/asks.js';
import type { RepoConfig } from '../../config/repo-config.js';
import type { BriefAsk, FixBrief } from '../../agent/brief.js';
import { sameLogin } from '../../kernel/ids.js';

// TR33: a writer's review that requests changes on a claim PR is an ask for a fix run, read once and
// recorded as first read; whoever may not ask (a reader, a bot, the PR's author) is recorded declined, so
// GitHub is not asked about them again. What asks a fix carries, and why a run started, are pure functions.

export const CHANGES_REQUESTED = 'CHANGES_REQUESTED';

/** Why an ask starts nothing: a code for the log and the store (`no_longer_a_writer` only for the pass that reads it). */
export type AskDeclined = 'not_a_writer' | 'a_bot' | 'the_author' | 'review_fixes_off' | 'no_longer_a_writer';

/** The fix asks a claim PR has open, oldest first. */
export const openFixAsks = (asks: readonly Ask[] | undefined, pr: number): Ask[] =>
  (asks ?? []).filter((a) => a.kind === 'fix' && a.number === pr && a.carriedByRun === null && a.declined === null);

/** The instructions a writer gave with `/yoke start`, open for an issue. */
export const openStartAsks = (asks: readonly Ask[] | undefined, issue: number): Ask[] =>
  (asks ?? []).filter(
    (a) => a.kind === 'start' && a.number === issue && a.carriedByRun === null && a.declined === null,
  );

export const askKeys = (asks: readonly Ask[]): AskKey[] =>
  asks.map((a) => ({ source: a.source, sourceId: a.sourceId }));

/** Who asked, in words: "a review by @a", "reviews by @a and @b", "a command by @c". */
export function askedBy(asks: readonly Pick<Ask, 'source' | 'author'>[]): string {
  const part = (source: Ask['source']) => {
    const logins = [...new Set(asks.filter((a) => a.source === source).map((a) => `@${a.author}`))];
    const n = asks.filter((a) => a.source === source).length;
    if (!n) return null;
    const who = logins.length > 1 ? `${logins.slice(0, -1).join(', ')} and ${logins.at(-1)}` : logins[0];
    return `${n === 1 ? 'a' : `${n}`} ${source}${n === 1 ? '' : 's'} by ${who}`;
  };
  return [part('review'), part('command')].filter(Boolean).join('; ');
}

/** Why a fix run starts: the lander's rejection at the head, what writers asked, or both. */
export function fixWhy(rejected: boolean, asks: readonly Pick<Ask, 'source' | 'author'>[]): string {
  return [rejected ? 'a lander rejection' : null, asks.length ? askedBy(asks) : null].filter(Boolean).join('; ');
}

const isBot = (login: string, trusted: ReadonlySet<string>) =>
  login.endsWith('[bot]') || trusted.has(login.toLowerCase());

/** Whether a review may ask for a fix, leaving aside the permission GitHub has yet to tell. */
export function reviewDeclined(
  review: Pick<ReviewView, 'author'>,
  claim: Pick<ClaimView, 'pull'>,
  config: Pick<RepoConfig, 'fix'>,
  trusted: ReadonlySet<string>,
): AskDeclined | null {
  if (isBot(review.author, trusted)) return 'a_bot';
  if (sameLogin(review.author, claim.pull.author)) return 'the_author';
  if (!config.fix.on_review) return 'review_fixes_off';
  return null;
}

export interface ReviewAskReads {
  forge: Pick<Forge, 'getPermission' | 'listReviewComments'>;
  now: () => number;
}

/**
 * TR33's reads, before the decision: each review requesting changes on a claim PR that yoke has not
 * recorded yet, as the ask it is (open, with its inline comments) or declined with why. A permission
 * GitHub would not tell is no write access.
 */
export async function readReviewAsks(
  deps: ReviewAskReads,
  repo: RepoRef,
  claims: readonly ClaimView[],
  /** The asks yoke recorded already, the repository's fix settings, and the logins whose markers count. */
  { known, config, trusted }: { known: readonly Ask[]; config: Pick<RepoConfig, 'fix'>; trusted: ReadonlySet<string> },
): Promise<NewAsk[]> {
  const seen = new Set(known.filter((a) => a.source === 'review').map((a) => a.sourceId));
  const out: NewAsk[] = [];
  for (const claim of claims) {
    const fresh = claim.reviews.filter(
      (r): r is ReviewView & { id: number } => r.state === CHANGES_REQUESTED && r.id !== undefined && !seen.has(r.id),
    );
    if (!fresh.length) continue;
    let inline: Awaited<ReturnType<Forge['listReviewComments']>> | null = null;
    for (const review of fresh) {
      let declined: AskDeclined | null = reviewDeclined(review, claim, config, trusted);
      if (!declined) {
        const permission = await deps.forge.getPermission(repo, review.author).catch(() => 'none' as const);
        if (!canWrite(permission)) declined = 'not_a_writer';
      }
      if (!declined) inline ??= await deps.forge.listReviewComments(repo, claim.pull.number);
      out.push({
        repo: repo.fullName,
        kind: 'fix',
        number: claim.pull.number,
        source: 'review',
        sourceId: review.id,
        author: review.author,
        headSha: review.commitId,
        text: declined ? '' : (review.body ?? ''),
        comments: declined
          ? []
          : (inline ?? [])
              .filter((c) => c.reviewId === review.id)
              .map((c) => ({ path: c.path, line: c.line, diffHunk: c.diffHunk, body: c.body })),
        askedAt: review.submittedAt ?? deps.now(),
        declined,
      });
    }
  }
  return out;
}

/** How much of each part of an ask goes to the run: a dispatch's inputs are limited, so long texts are cut, never dropped. */
export const ASK_LIMITS = { text: 4000, comment: 1500, hunk: 800, comments: 15, total: 40_000 } as const;

const cut = (text: string, n: number) => (text.length > n ? `${text.slice(0, n)}…` : text);

const briefOf = (asks: readonly Ask[], head: string | null, scale: number): BriefAsk[] =>
  asks.map((a) => ({
    source: a.source,
    author: a.author,
    writtenOn: a.headSha && a.headSha !== head ? a.headSha : null,
    text: cut(a.text, Math.ceil(ASK_LIMITS.text * scale)),
    comments: a.comments.slice(0, ASK_LIMITS.comments).map((c) => ({
      path: c.path,
      line: c.line,
      diffHunk: cut(c.diffHunk, Math.ceil(ASK_LIMITS.hunk * scale)),
      body: cut(c.body, Math.ceil(ASK_LIMITS.comment * scale)),
    })),
  }));

/**
 * The brief of a run: the rejection (if the head was rejected) and every open ask, oldest first. When all
 * of them will not fit in the input, each text is cut shorter, so every ask still reaches the run.
 */
export function fixBrief(rejection: string | null, asks: readonly Ask[], head: string | null): FixBrief {
  let scale = 1;
  let brief: FixBrief = { rejection, asks: briefOf(asks, head, scale) };
  while (scale > 0.05 && JSON.stringify(brief).length > ASK_LIMITS.total) {
    scale /= 2;
    brief = { rejection, asks: briefOf(asks, head, scale) };
  }
  return brief;
}

/** TR33: the asks a claim's next fix carries: a writer's reviews (while `fix.on_review` holds) and `/yoke fix` commands. */
export function fixAsksOf(facts: Pick<RepoFacts, 'asks' | 'config'>, claim: ClaimView): Ask[] {
  return openFixAsks(facts.asks, claim.pull.number).filter(
    (a) => a.source !== 'review' || (facts.config.fix.on_review && reviewStands(a, claim.reviews)),
  );
}

/**
 * TR33: a review's ask stands while the review does, as GitHub counts it: not dismissed, and not followed
 * by an approval from its author. A review GitHub no longer lists stands (what was asked is still done).
 */
function reviewStands(a: Ask, reviews: ClaimView['reviews']): boolean {
  if (reviews.some((r) => r.id === a.sourceId && r.state === 'DISMISSED')) return false;
  const latest = reviews.filter((r) => r.author === a.author && r.state !== 'COMMENTED').at(-1);
  return latest?.state !== 'APPROVED';
}

/** The open asks, which are the ones a run would carry: neither carried nor declined. */
const isOpen = (a: Ask) => a.carriedByRun === null && a.declined === null;

/**
 * TR33's read of who still may ask: the authors of open asks whom GitHub no longer names writers (demoted, or
 * gone from the repository since they asked), lower-case. A permission GitHub would not tell is no write access.
 */
export async function readDemotedAskers(
  forge: Pick<Forge, 'getPermission'>,
  repo: RepoRef,
  asks: readonly Ask[],
): Promise<Set<string>> {
  const out = new Set<string>();
  for (const login of new Set(asks.filter(isOpen).map((a) => a.author))) {
    const permission = await forge.getPermission(repo, login).catch(() => 'none' as const);
    if (!canWrite(permission)) out.add(login.toLowerCase());
  }
  return out;
}

/** TR33, pure: an ask stands only while its author may still ask; one demoted since asks nothing this pass (it is kept, should they be a writer again). */
export const standingAsks = (asks: readonly Ask[], demoted: ReadonlySet<string>): Ask[] =>
  asks.map((a) =>
    isOpen(a) && demoted.has(a.author.toLowerCase())
      ? { ...a, declined: 'no_longer_a_writer' satisfies AskDeclined }
      : a,
  );
