import { describe, expect, it } from 'vitest';
import { judgeLanding, type LandingFacts } from '../../src/http/operator/doctor-landing.js';
import type { BranchRules } from '../../src/forge/types.js';

// `yoke doctor`'s landing check: the default branch's rules against the way .github/yoke.yml lands, whole texts.
// Each case is what a repository's owner could have set up instead of the ruleset `yoke init --landing` prints.

const REPO = 'acme/demo';
const APP = 4242;
const lander = (appId: number | null) => ({ context: 'yoke/lander', appId });
const facts = (rules: BranchRules | null, autoland: Partial<LandingFacts['autoland']> = {}): LandingFacts => ({
  branch: 'main',
  autoland: { enabled: true, fastForward: false, mergeMethod: 'squash', ...autoland },
  rules,
});
const RULESET = (way: string) =>
  `Add yoke's ruleset for landing ${way === 'pr' ? 'through the PR' : way === 'queue' ? "through GitHub's merge queue" : 'by fast-forward'}: \`yoke init --agent claude-code --landing ${way} --app-id ${APP}\` prints it, ready for \`gh api repos/acme/demo/rulesets --input -\` (or on GitHub: Settings, Rules, Rulesets).`;

describe("yoke doctor's landing check", () => {
  it('passes each way of landing when the rules match it', () => {
    expect(judgeLanding(REPO, facts({ requiredChecks: [lander(APP)], mergeQueue: null }), APP)).toEqual({
      state: 'ok',
      text: "main requires yoke/lander from yoke's app (4242), and yoke lands through the PR, merging by squash, as .github/yoke.yml chooses.",
      fix: null,
    });
    expect(
      judgeLanding(REPO, facts({ requiredChecks: [lander(APP)], mergeQueue: null }, { fastForward: true }), APP).text,
    ).toBe(
      "main requires yoke/lander from yoke's app (4242), and yoke lands by fast-forward, as .github/yoke.yml chooses.",
    );
    expect(
      judgeLanding(REPO, facts({ requiredChecks: [lander(APP)], mergeQueue: { mergeMethod: 'SQUASH' } }), APP).text,
    ).toBe(
      "main requires yoke/lander from yoke's app (4242), and yoke lands through GitHub's merge queue, merging by squash, as .github/yoke.yml chooses.",
    );
  });

  it('fails a branch whose rules do not require yoke/lander at all, naming the ruleset for its way', () => {
    // Another check required, as a repository that protects main for its own CI has it.
    expect(
      judgeLanding(REPO, facts({ requiredChecks: [{ context: 'ci/test', appId: 15368 }], mergeQueue: null }), APP),
    ).toEqual({
      state: 'failed',
      text: "main's rules do not require the status check yoke/lander, so anyone who can merge there can merge a PR no lander accepted.",
      fix: RULESET('pr'),
    });
    expect(judgeLanding(REPO, facts({ requiredChecks: [], mergeQueue: { mergeMethod: 'SQUASH' } }), APP).fix).toBe(
      RULESET('queue'),
    );
  });

  it('fails yoke/lander required from any source, or from another app: a writer could post it', () => {
    expect(judgeLanding(REPO, facts({ requiredChecks: [lander(null)], mergeQueue: null }), APP)).toEqual({
      state: 'failed',
      text: "main's rules require yoke/lander from any source, not from yoke's app (4242): a yoke/lander status that a writer or a workflow posts satisfies them.",
      fix: `Set the check's source to yoke's app: in the ruleset's required status checks, give yoke/lander \`"integration_id": 4242\` (${RULESET('pr').replace(/^Add/, 'or add')}).`,
    });
    // GitHub Actions' app (15368): what a workflow's GITHUB_TOKEN posts as.
    expect(judgeLanding(REPO, facts({ requiredChecks: [lander(15368)], mergeQueue: null }), APP).text).toBe(
      "main's rules require yoke/lander from app 15368, not from yoke's app (4242): a yoke/lander status that a writer or a workflow posts satisfies them.",
    );
    // Required twice, once from yoke's app: the app's requirement holds, so it passes.
    expect(
      judgeLanding(REPO, facts({ requiredChecks: [lander(null), lander(APP)], mergeQueue: null }), APP).state,
    ).toBe('ok');
  });

  it('fails fast-forward landing on a branch that requires the merge queue, and a queue merging another way', () => {
    expect(
      judgeLanding(
        REPO,
        facts({ requiredChecks: [lander(APP)], mergeQueue: { mergeMethod: 'SQUASH' } }, { fastForward: true }),
        APP,
      ),
    ).toEqual({
      state: 'failed',
      text: ".github/yoke.yml lands by fast-forward (autoland.fast_forward), but main's rules require the merge queue: GitHub refuses every move of main but the queue's, so nothing lands.",
      fix: "Choose one way: remove autoland.fast_forward from .github/yoke.yml to land through the queue, or remove the merge_queue rule from main's ruleset to land by fast-forward.",
    });
    expect(
      judgeLanding(
        REPO,
        facts({ requiredChecks: [lander(APP)], mergeQueue: { mergeMethod: 'MERGE' } }, { mergeMethod: 'rebase' }),
        APP,
      ),
    ).toEqual({
      state: 'failed',
      text: "main's merge queue merges by MERGE, but .github/yoke.yml's autoland.merge_method is rebase.",
      fix: "Set the merge_queue rule's merge_method to REBASE, or autoland.merge_method to merge.",
    });
  });

  it('says every problem at once, each with its fix', () => {
    const r = judgeLanding(
      REPO,
      facts({ requiredChecks: [], mergeQueue: { mergeMethod: 'SQUASH' } }, { fastForward: true }),
      APP,
    );
    expect(r.state).toBe('failed');
    expect(r.text.split(/(?<=\.) (?=[.m])/)).toHaveLength(2);
    expect(r.fix).toBe(
      `${RULESET('fast-forward')} Choose one way: remove autoland.fast_forward from .github/yoke.yml to land through the queue, or remove the merge_queue rule from main's ruleset to land by fast-forward.`,
    );
  });

  it('skips a repository that lands nothing, and says when it could not read the rules or its app id', () => {
    expect(judgeLanding(REPO, facts(null, { enabled: false }), APP)).toEqual({
      state: 'skipped',
      text: "autoland is off in .github/yoke.yml: yoke lands nothing on acme/demo, so main's rules need match no way of landing.",
      fix: null,
    });
    expect(judgeLanding(REPO, null, APP).state).toBe('skipped');
    expect(judgeLanding(REPO, facts(null), APP)).toEqual({
      state: 'failed',
      text: 'yoke could not read the rules in force on main, so it cannot tell whether anything merges there that no lander accepted.',
      fix: "Check that main is acme/demo's default branch and the app is still installed, then run `yoke doctor acme/demo` again.",
    });
    // APP_ID unset: the source cannot be compared, and the text says so rather than pass it silently.
    expect(judgeLanding(REPO, facts({ requiredChecks: [lander(15368)], mergeQueue: null }), null).text).toBe(
      'main requires yoke/lander (APP_ID is unset here, so its source was not checked), and yoke lands through the PR, merging by squash, as .github/yoke.yml chooses.',
    );
  });
});
