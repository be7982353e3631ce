import { ok, refuse, refused, type Result } from '../kernel/result.js';
import { parseDeliverySettings, type DeliverySettings } from '../config/delivery.js';
import type { RepoConfig } from '../config/repo-config.js';
import type { FleetContext } from '../fleet/context.js';
import { repoRefOf } from '../fleet/repo-state.js';
import type { RepoName, RepoRef } from '../forge/types.js';
import { formatItem, parseItem } from './runs/items.js';
import type { DeploymentRun } from '../store/delivery/deployment-runs.js';

// What delivery code gets of the fleet: the store, the forge, the clock, the
// log and the config refresh policy. Results are data: a value or a refusal.

export type DeliveryContext = Pick<FleetContext, 'processId' | 'store' | 'forge' | 'clock' | 'log' | 'policy'> &
  Partial<Pick<FleetContext, 'webUrl' | 'tracer'>>;

/**
 * TR11: who makes a delivery request, from its credential (never from a body).
 * An operator may act for the run's own driver; a person is a GitHub login;
 * a run is a live yoke run, for the item it holds.
 */
export type Actor = { role: 'operator' } | { role: 'person'; login: string } | { role: 'run'; runId: string };

export const OPERATOR: Actor = { role: 'operator' };

export interface DeliveryRepo {
  repo: RepoRef;
  config: RepoConfig;
  settings: DeliverySettings;
  item: (n: number) => string;
  parseItem: (ref: string) => number | null;
}

/** One stage of one deployment run, bound once: what the gate's steps, the close-outs and the notices are about. */
export interface StageAt {
  ctx: DeliveryContext;
  dr: DeliveryRepo;
  run: DeploymentRun;
  stage: string;
}

/** A deployment run's stage as a request names it (a route's :run and :stage, a command's run and stage). */
export interface StageRef {
  runId: string;
  stage: string;
}

/** An opted-in repository with valid delivery settings, or the refusal that says what to fix. */
export async function deliveryRepo(ctx: DeliveryContext, name: RepoName): Promise<Result<DeliveryRepo>> {
  const repo = await repoRefOf(ctx.store, name);
  if (!repo) return refuse('repo_not_installed', { repo: name });
  return deliveryRepoAt(ctx, repo);
}

/** `deliveryRepo` of a repository whose reference is in hand (a sweep's, from the one listing it read). */
export async function deliveryRepoAt(ctx: DeliveryContext, repo: RepoRef): Promise<Result<DeliveryRepo>> {
  const name = repo.fullName;
  const cfg = await ctx.forge.readConfig(repo, { maxAgeMs: ctx.policy.configRefreshMs });
  if (cfg.state === 'absent') return refuse('repo_not_opted_in', { repo: name });
  if (cfg.state === 'invalid') return refuse('repo_disabled', { repo: name, detail: cfg.reason });
  const delivery = parseDeliverySettings(name, cfg.config.delivery);
  if (delivery.state === 'absent') return refuse('delivery_not_configured', { repo: name });
  if (delivery.state === 'refused') return refused(delivery.refusal);
  const prefix = cfg.config.prefix;
  return ok({
    repo,
    config: cfg.config,
    settings: delivery.settings,
    item: (n) => formatItem(prefix, n),
    parseItem: (ref) => parseItem(prefix, ref),
  });
}
