import type { ClaimView, ReviewView } from '../../forge/types.js';
import type { RepoConfig } from '../../config/repo-config.js';
import { globToRegExp } from '../../kernel/glob.js';
import { ALWAYS_PROTECTED, withFolders } from '../../kernel/agent-settings.js';
import { sameLogin } from '../../kernel/ids.js';

// TR14: what yoke trusts lives in the repository: its workflows, its opt-in
// file, the lander's validate.sh, and the agents' own settings. A claim PR
// that changes any of them is never merged without a person: the lander may
// accept it, but the merge waits for an approving review of that very head by
// a writer who is neither the PR's author nor a bot.

/** Always protected; a repository adds its own globs under `protected_paths:`. */
export const DEFAULT_PROTECTED_PATHS: readonly string[] = ALWAYS_PROTECTED;

/** The protected globs in force: the defaults, then the repository's own. */
export function protectedGlobs(extra: readonly string[]): string[] {
  return [...new Set([...DEFAULT_PROTECTED_PATHS, ...extra])];
}

/**
 * The files of a change that a glob protects, in the order given. A folder the glob names protects all
 * below it, and itself: `X` is protected whenever `X/**` is (a symlink standing in for the folder).
 */
export function protectedFilesOf(files: readonly string[], globs: readonly string[]): string[] {
  const res = withFolders(globs).map(globToRegExp);
  // Git paths never start with `/`; compare without one so `/CLAUDE.md` in a glob is CLAUDE.md.
  return [...new Set(files)].filter((f) => res.some((re) => re.test(f.replace(/^\/+/, ''))));
}

const BOT = /\[bot\]$/i;

/**
 * Who approved this head as TR09 counts a person: the latest review of each
 * login that is not a comment, an approval of exactly `head`, by someone who
 * is not the PR's author, not a bot and not `ghost`. Whether they can write is
 * asked of GitHub by the caller, at the time.
 */
export function headApprovers(reviews: readonly ReviewView[], head: string, author: string): string[] {
  const latest = new Map<string, ReviewView>();
  for (const r of reviews) if (r.state !== 'COMMENTED') latest.set(r.author.toLowerCase(), r);
  const out: string[] = [];
  for (const r of latest.values()) {
    if (r.state !== 'APPROVED' || r.commitId !== head) continue;
    if (sameLogin(r.author, author) || r.author === 'ghost' || BOT.test(r.author)) continue;
    out.push(r.author);
  }
  return out;
}

/** What GitHub could not list stands for a protected change: yoke fails closed. */
export const UNLISTED_FILES = '(GitHub did not list the files of this change)';

/** The protected paths a claim's change touches at its head (TR14). */
export function protectedChangeOf(
  facts: { config: Pick<RepoConfig, 'protected_paths'> },
  claim: Pick<ClaimView, 'files'>,
): string[] {
  if (claim.files === null) return [UNLISTED_FILES];
  return protectedFilesOf(claim.files, protectedGlobs(facts.config.protected_paths));
}

/** SP18: who has changes requested standing: each reviewer's latest approval or change request, not a comment. */
export function blockingReviewers(reviews: readonly ReviewView[], ignored: (login: string) => boolean): string[] {
  const latest = new Map<string, string>();
  for (const r of reviews) {
    if (ignored(r.author) || r.state === 'COMMENTED') continue;
    latest.set(r.author, r.state);
  }
  return [...latest].filter(([, state]) => state === 'CHANGES_REQUESTED').map(([login]) => login);
}
