import { makeRefusal, type Refusal } from '../codes.js';
import type { RepoRef } from '../forge/types.js';
import { effectiveCap } from './cap.js';
import { issueSubject, pullSubject } from './candidate.js';
import type { Engine } from './engine.js';

// The actions people take, shared by comment commands and the HTTP API.
// Each answers with data: what happened, or a refusal with its recovery.

export type ControlResult = { ok: true; message: string } | { ok: false; refusal: Refusal };

const refuse = (...args: Parameters<typeof makeRefusal>): ControlResult => ({ ok: false, refusal: makeRefusal(...args) });

async function optedIn(engine: Engine, fullName: string): Promise<{ repo: RepoRef } | { refusal: ControlResult }> {
  const repo = engine.repoRef(fullName);
  if (!repo) return { refusal: refuse('repo_not_opted_in', { repo: fullName }) };
  const cfg = await engine.deps.forge.readConfig(repo, { maxAgeMs: engine.deps.policy.configRefreshMs });
  if (cfg.state === 'absent') return { refusal: refuse('repo_not_opted_in', { repo: fullName }) };
  if (cfg.state === 'invalid') return { refusal: refuse('repo_disabled', { repo: fullName, detail: cfg.reason }) };
  return { repo };
}

/** A manual AFK start: recorded as a request the next pass launches (SP01), refused while paused (SP15). */
export async function requestStart(engine: Engine, fullName: string, issue: number, by: string): Promise<ControlResult> {
  const got = await optedIn(engine, fullName);
  if ('refusal' in got) return got.refusal;
  const { store, forge, clock } = engine.deps;
  const state = store.repos.get(fullName)!;
  if (state.pausedSince !== null) return refuse('repo_paused', { repo: fullName, threshold: engine.deps.policy.pauseThreshold });
  const found = await forge.getIssue(got.repo, issue);
  if (!found || found.state !== 'open' || found.isPull) return refuse('issue_not_found', { repo: fullName, number: issue });
  const live = store.runs.liveForSubject(fullName, issueSubject(issue));
  if (live) return refuse('subject_busy', { repo: fullName, subject: `#${issue}`, run: live.id });
  store.requests.add(fullName, 'start', issue, by, clock.now());
  void engine.kick();
  return { ok: true, message: `Queued a manual AFK run for #${issue}; it launches on the next pass with a free slot.` };
}

export async function requestLand(engine: Engine, fullName: string, pr: number, by: string): Promise<ControlResult> {
  const got = await optedIn(engine, fullName);
  if ('refusal' in got) return got.refusal;
  const { store, forge, clock } = engine.deps;
  const found = await forge.getIssue(got.repo, pr);
  if (!found || found.state !== 'open' || !found.isPull) return refuse('pull_not_found', { repo: fullName, number: pr });
  const live = store.runs.liveForSubject(fullName, pullSubject(pr));
  if (live) return refuse('subject_busy', { repo: fullName, subject: `#${pr}`, run: live.id });
  store.requests.add(fullName, 'land', pr, by, clock.now());
  void engine.kick();
  return { ok: true, message: `Queued a lander for #${pr} at its current head; it launches on the next pass with a free slot.` };
}

export async function setAutoLoop(engine: Engine, fullName: string, on: boolean): Promise<ControlResult> {
  const got = await optedIn(engine, fullName);
  if ('refusal' in got) return got.refusal;
  const { store, clock } = engine.deps;
  store.repos.setAutoLoop(fullName, on, clock.now());
  const state = store.repos.get(fullName)!;
  if (on) void engine.kick();
  const paused = state.pausedSince !== null ? ' It stays paused until `/yoke reset`.' : '';
  return { ok: true, message: `The auto loop of ${fullName} is ${on ? 'on' : 'off'}.${paused}` };
}

/** SP15: the only way out of a pause. */
export async function resetRepo(engine: Engine, fullName: string): Promise<ControlResult> {
  const got = await optedIn(engine, fullName);
  if ('refusal' in got) return got.refusal;
  const { store, clock } = engine.deps;
  const before = store.repos.get(fullName)!;
  store.repos.unpause(fullName, clock.now());
  void engine.kick();
  return {
    ok: true,
    message: `Reset ${fullName}: ${before.consecutiveFailures} consecutive failures cleared${before.pausedSince !== null ? ' and the pause lifted' : ''}.`,
  };
}

export async function repoStatus(engine: Engine, fullName: string): Promise<ControlResult> {
  const got = await optedIn(engine, fullName);
  if ('refusal' in got) return got.refusal;
  const { store, forge, policy } = engine.deps;
  const cfg = await forge.readConfig(got.repo, { maxAgeMs: policy.configRefreshMs });
  const state = store.repos.get(fullName)!;
  const live = store.runs.listLive();
  const mine = live.filter((r) => r.repo === fullName);
  const auto = state.autoLoop ?? (cfg.state === 'valid' ? cfg.config.auto : false);
  const lines = [
    `**yoke status for ${fullName}**`,
    `- auto loop: ${auto ? 'on' : 'off'}${state.pausedSince !== null ? ` (paused since ${new Date(state.pausedSince).toISOString()}; recover with \`/yoke reset\`)` : ''}`,
    `- consecutive AFK failures: ${state.consecutiveFailures} of ${policy.pauseThreshold}`,
    `- cap: ${effectiveCap(policy, fullName)}; live runs fleet-wide: ${live.length}`,
    `- autoland: ${cfg.state === 'valid' && cfg.config.autoland.enabled ? 'on' : 'off'}; fix-forward: ${cfg.state === 'valid' && cfg.config.fix_forward.enabled ? 'on' : 'off'}`,
    ...mine.map((r) => `- live: \`${r.id}\` ${r.kind} on ${r.subject}, deadline ${new Date(r.budgetDeadline).toISOString()}`),
  ];
  return { ok: true, message: lines.join('\n') };
}
