import { LANDER_CONTEXT, type Landing } from '../../config/landing.js';
import type { BranchRules } from '../../forge/types.js';

// `yoke doctor`'s landing check, pure: whether the rules in force on the default branch match the way its opt-in
// file chose to land (docs/landing.md's table), each mismatch with the setting that fixes it.

/** What the landing check reads: the opt-in file's autoland, and the default branch's rules (null: GitHub would not say). */
export interface LandingFacts {
  branch: string;
  autoland: { enabled: boolean; fastForward: boolean; mergeMethod: 'merge' | 'squash' | 'rebase' };
  rules: BranchRules | null;
}

export type LandingJudged =
  { state: 'ok' | 'skipped'; text: string; fix: null } | { state: 'failed'; text: string; fix: string };

/** The way yoke lands here: fast-forward when the opt-in file says so, through the queue when the branch requires it. */
export function landingWay(f: LandingFacts): Landing {
  if (f.autoland.fastForward) return 'fast-forward';
  return f.rules?.mergeQueue ? 'queue' : 'pr';
}

const WAY_WORDS: Record<Landing, string> = {
  pr: 'through the PR',
  'fast-forward': 'by fast-forward',
  queue: "through GitHub's merge queue",
};

/** Where the ruleset for a way comes from, ready for `gh api`. */
function rulesetFix(repo: string, way: Landing, appId: number | null): string {
  return `Add yoke's ruleset for landing ${WAY_WORDS[way]}: \`yoke init --agent claude-code --landing ${way}${appId === null ? '' : ` --app-id ${appId}`}\` prints it, ready for \`gh api repos/${repo}/rulesets --input -\` (or on GitHub: Settings, Rules, Rulesets).`;
}

/** Pure: the landing check, from what was read; `appId` null when this yoke does not know its App ID (APP_ID unset). */
export function judgeLanding(repo: string, f: LandingFacts | null, appId: number | null): LandingJudged {
  if (!f) return { state: 'skipped', text: 'No valid .github/yoke.yml says how yoke lands (see opt_in).', fix: null };
  if (!f.autoland.enabled)
    return {
      state: 'skipped',
      text: `autoland is off in .github/yoke.yml: yoke lands nothing on ${repo}, so ${f.branch}'s rules need match no way of landing.`,
      fix: null,
    };
  const way = landingWay(f);
  if (!f.rules)
    return {
      state: 'failed',
      text: `yoke could not read the rules in force on ${f.branch}, so it cannot tell whether anything merges there that no lander accepted.`,
      fix: `Check that ${f.branch} is ${repo}'s default branch and the app is still installed, then run \`yoke doctor ${repo}\` again.`,
    };
  const problems: { text: string; fix: string }[] = [];
  const lander = f.rules.requiredChecks.filter((c) => c.context === LANDER_CONTEXT);
  if (lander.length === 0)
    problems.push({
      text: `${f.branch}'s rules do not require the status check ${LANDER_CONTEXT}, so anyone who can merge there can merge a PR no lander accepted.`,
      fix: rulesetFix(repo, way, appId),
    });
  else if (appId !== null && !lander.some((c) => c.appId === appId)) {
    const from = [...new Set(lander.map((c) => (c.appId === null ? 'any source' : `app ${c.appId}`)))].join(' or ');
    problems.push({
      text: `${f.branch}'s rules require ${LANDER_CONTEXT} from ${from}, not from yoke's app (${appId}): a ${LANDER_CONTEXT} status that a writer or a workflow posts satisfies them.`,
      fix: `Set the check's source to yoke's app: in the ruleset's required status checks, give ${LANDER_CONTEXT} \`"integration_id": ${appId}\` (${rulesetFix(repo, way, appId).replace(/^Add/, 'or add')}).`,
    });
  }
  if (way === 'fast-forward' && f.rules.mergeQueue)
    problems.push({
      text: `.github/yoke.yml lands by fast-forward (autoland.fast_forward), but ${f.branch}'s rules require the merge queue: GitHub refuses every move of ${f.branch} but the queue's, so nothing lands.`,
      fix: `Choose one way: remove autoland.fast_forward from .github/yoke.yml to land through the queue, or remove the merge_queue rule from ${f.branch}'s ruleset to land by fast-forward.`,
    });
  const method = f.autoland.mergeMethod.toUpperCase();
  if (way === 'queue' && f.rules.mergeQueue && f.rules.mergeQueue.mergeMethod !== method)
    problems.push({
      text: `${f.branch}'s merge queue merges by ${f.rules.mergeQueue.mergeMethod}, but .github/yoke.yml's autoland.merge_method is ${f.autoland.mergeMethod}.`,
      fix: `Set the merge_queue rule's merge_method to ${method}, or autoland.merge_method to ${f.rules.mergeQueue.mergeMethod.toLowerCase()}.`,
    });
  if (problems.length > 0)
    return { state: 'failed', text: problems.map((p) => p.text).join(' '), fix: problems.map((p) => p.fix).join(' ') };
  const source =
    appId === null ? ' (APP_ID is unset here, so its source was not checked)' : ` from yoke's app (${appId})`;
  const how = way === 'fast-forward' ? WAY_WORDS[way] : `${WAY_WORDS[way]}, merging by ${f.autoland.mergeMethod}`;
  return {
    state: 'ok',
    text: `${f.branch} requires ${LANDER_CONTEXT}${source}, and yoke lands ${how}, as .github/yoke.yml chooses.`,
    fix: null,
  };
}
