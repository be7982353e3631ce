import type { RepoName, RepoRef } from '../../forge/types.js';
import { disabledNotice, pauseNotice, issueEditedNotice } from '../notices/messages.js';
import type { NewAsk } from '../../store/fleet/asks.js';
import { repoRefOf } from '../repo-state.js';
import { errorStack } from '../../kernel/error-text.js';
import { openIssueTrace } from '../notices/issue-trace.js';
import type { Io } from '../context.js';

// What the read half of a pass finds that the store must be told: repos seen
// for the first time, opt-in files that became invalid or valid again, and
// requests that can no longer be served. Planned while reading, written after
// the decisions, so reading (and previewing) a pass changes nothing.

export type Housekeeping =
  | { type: 'ensure_repo'; repo: RepoName; installationId: number }
  | { type: 'clear_disabled'; repo: RepoName }
  /** GH01: disable, and say why once per reason on the control issue (if there is one). */
  | { type: 'disable'; repo: RepoRef; reason: string; controlIssue: number | null; notify: boolean }
  | { type: 'drop_request'; requestId: number }
  /** TR24: the body as yoke first saw the AFK label (or as a writer's start confirmed it). */
  | { type: 'record_afk_label'; repo: RepoName; issue: number; digest: string; labelledBy: string | null }
  /** TR33: a review requesting changes, as first read: an ask, or declined with why. */
  | { type: 'record_ask'; ask: NewAsk }
  /** TR24: say once per edit that the issue is not worked unseen. */
  | { type: 'notify_issue_edited'; repo: RepoRef; issue: number; digest: string; label: string; claim: number | null };

export async function executeHousekeeping(deps: Io, planned: readonly Housekeeping[]): Promise<void> {
  const { store, forge, log } = deps;
  for (const h of planned) {
    switch (h.type) {
      case 'ensure_repo':
        await store.repos.ensure(h.repo, h.installationId, deps.clock.now());
        break;
      case 'clear_disabled':
        await store.repos.setDisabled(h.repo, null, deps.clock.now());
        break;
      case 'drop_request':
        await store.requests.drop(h.requestId);
        break;
      case 'record_ask':
        await store.asks.record(h.ask);
        if (h.ask.declined)
          log.info(
            { repo: h.ask.repo, pr: h.ask.number, by: h.ask.author, why: h.ask.declined },
            'a review requesting changes starts nothing',
          );
        break;
      case 'record_afk_label':
        await store.afkLabels.record({
          repo: h.repo,
          issueNumber: h.issue,
          bodyDigest: h.digest,
          labelledBy: h.labelledBy,
          recordedAt: deps.clock.now(),
        });
        // The issue's trace opens with its label, if no webhook opened it first.
        await openIssueTrace(deps, { repo: h.repo, issue: h.issue, via: 'poll', by: h.labelledBy });
        break;
      case 'notify_issue_edited':
        try {
          await forge.createComment(h.repo, h.issue, issueEditedNotice(h.repo.fullName, h.issue, h.label, h.claim));
          await store.afkLabels.setNotified(h.repo.fullName, h.issue, h.digest);
        } catch (err) {
          log.warn(
            { repo: h.repo.fullName, issue: h.issue, err: errorStack(err) },
            'could not say that an edited issue waits; retried next pass',
          );
        }
        break;
      case 'disable': {
        await store.repos.setDisabled(h.repo.fullName, h.reason, deps.clock.now());
        if (!h.notify) break;
        log.warn({ repo: h.repo.fullName, reason: h.reason }, 'repo disabled by its opt-in file');
        if (h.controlIssue !== null) {
          try {
            await forge.createComment(h.repo, h.controlIssue, disabledNotice(h.repo.fullName, h.reason));
          } catch (err) {
            log.warn(
              { repo: h.repo.fullName, err: errorStack(err) },
              'could not post the disabled notice; retried next pass',
            );
            break;
          }
        }
        await store.repos.markDisabledNotified(h.repo.fullName, h.reason);
        break;
      }
    }
  }
}

/** SP15: tells the issue whose AFK failure paused its repository. */
export async function postPauseNotice(
  deps: Io & { pauseThreshold: number },
  name: RepoName,
  issue: number | null,
): Promise<void> {
  const repo = await repoRefOf(deps.store, name);
  const state = await deps.store.repos.get(name);
  if (!repo || !state || issue === null) return;
  try {
    await deps.forge.createComment(repo, issue, pauseNotice(name, state.consecutiveFailures, deps.pauseThreshold));
  } catch (err) {
    deps.log.warn({ repo: name, err: errorStack(err) }, 'could not post the pause notice');
  }
}
