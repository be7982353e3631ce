import { keysOf } from '../../kernel/guards.js';

// yoke's figures, declared once (the collector: metrics.ts). Each
// metric is declared once, in METRICS: its name, its meaning and its labels,
// which stay bounded (a repository, a kind, a code; never a run id or an issue
// number). The fleet's figures are read from the store as a scrape asks, and
// served by the process that leads only, so that two yokes on one database
// never count them twice; each process serves its own work (its passes, its
// GitHub requests, the webhooks it was sent) whether it leads or not.

export type Kind = 'gauge' | 'counter' | 'histogram';

export interface MetricDef {
  kind: Kind;
  help: string;
  labels: readonly string[];
  /** `fleet`: read from the store, served by the leader only; `process`: this process's own work. */
  scope: 'fleet' | 'process';
}

const def = <K extends Kind>(
  kind: K,
  scope: MetricDef['scope'],
  labels: readonly string[],
  help: string,
): MetricDef & { kind: K } => ({
  kind,
  help,
  labels,
  scope,
});

/** Every metric yoke serves (docs/hosting.md's table is made from this one). */
export const METRICS = {
  yoke_runs_live: def(
    'gauge',
    'fleet',
    ['kind', 'repo'],
    'Runs live now, by kind and repository (each kind also with an empty `repo`, at 0, so an idle fleet sums to 0).',
  ),
  yoke_cap: def('gauge', 'fleet', [], 'The fleet-wide cap on live runs (YOKE_GLOBAL_CAP).'),
  yoke_cap_used: def('gauge', 'fleet', [], 'Live runs counted against the cap.'),
  yoke_repo_paused: def(
    'gauge',
    'fleet',
    ['repo'],
    '1 while a repository is paused by its run failures (strikes); only paused ones are listed, with `repo` "" at 0 so an untroubled fleet has a series.',
  ),
  yoke_repo_disabled: def(
    'gauge',
    'fleet',
    ['repo'],
    '1 while a repository is disabled (its opt-in file is refused); only disabled ones are listed, with `repo` "" at 0.',
  ),
  yoke_candidates_waiting: def(
    'gauge',
    'fleet',
    ['stage', 'code'],
    'Work the last pass passed over, by stage and its why-not code (`at_cap`, `budget_reserved`, `request_budget`, …).',
  ),
  yoke_budget_limit_usd: def(
    'gauge',
    'fleet',
    ['repo', 'period'],
    'Each budget in force, in US dollars (repo "" is the fleet\'s).',
  ),
  yoke_budget_held_usd: def(
    'gauge',
    'fleet',
    ['repo', 'period'],
    'What each budget holds: spent, plus reserved by live runs, in US dollars.',
  ),
  yoke_runs_unsettled: def(
    'gauge',
    'fleet',
    [],
    'Runs launched this month that ended without reporting what they spent, each holding its reservation until `yoke runs settle` (BU02).',
  ),
  yoke_lander_verdicts_total: def('counter', 'fleet', ['verdict'], 'Lander verdicts recorded, by verdict.'),
  yoke_flaky_heads_total: def(
    'counter',
    'fleet',
    [],
    'Heads a lander rejected and a later lander accepted (LD06: the validation was flaky, or the base moved).',
  ),
  yoke_merges_total: def('counter', 'fleet', ['state'], 'Merges yoke made (`merged`) or GitHub refused (`refused`).'),
  yoke_protected_holds: def(
    'gauge',
    'fleet',
    [],
    'Accepted claim PRs that change a protected path and wait for a person.',
  ),
  yoke_deployment_runs: def(
    'gauge',
    'fleet',
    ['status', 'stage'],
    'Deployment runs by status, and the stage an active one is at (empty for one that ended).',
  ),
  yoke_deployment_stage_waits: def(
    'gauge',
    'fleet',
    ['stage', 'code'],
    "What active deployment runs' QA stages wait on, by stage and code, as their last gate check found it.",
  ),
  yoke_deployment_waiting_seconds: def(
    'gauge',
    'fleet',
    ['stage'],
    'How long the longest-waiting active deployment run has waited at its QA stage, since its gate last moved.',
  ),
  yoke_leader: def('gauge', 'process', [], '1 while this process leads the ticks.'),
  yoke_tick_seconds: def(
    'gauge',
    'process',
    [],
    'The pass tick (YOKE_TICK_SECONDS): a pass longer than it falls behind.',
  ),
  yoke_leader_epoch: def('gauge', 'process', [], 'The epoch of the lead this process holds (0: it does not lead).'),
  yoke_passes_total: def('counter', 'process', ['trigger'], 'Spawn passes this process ran, by what asked for them.'),
  yoke_pass_seconds: def('histogram', 'process', [], "A spawn pass's duration, from its read to its last write."),
  yoke_last_pass_github_requests: def(
    'gauge',
    'process',
    [],
    'GitHub requests this process sent while its last pass ran (304s included; webhooks handled meanwhile too).',
  ),
  yoke_launches_total: def(
    'counter',
    'process',
    ['kind', 'result'],
    "Launch decisions this process's passes made, by run kind and result (`launched`, `over_cap`, `launch_failed`, …).",
  ),
  yoke_github_requests_total: def(
    'counter',
    'process',
    ['method', 'route', 'status'],
    'GitHub requests this process sent, by method, route template and status (304: answered from the cache).',
  ),
  yoke_github_points_left: def(
    'gauge',
    'process',
    ['installation'],
    "The request budget's points left this minute on the installation's busiest endpoint, or of its primary limit if fewer (SC03).",
  ),
  yoke_github_primary_left: def(
    'gauge',
    'process',
    ['installation'],
    "Requests left of the installation's hourly primary limit above the fifth yoke leaves alone, as GitHub's last answer said (SC03).",
  ),
  yoke_github_backoff_seconds: def(
    'gauge',
    'process',
    ['installation'],
    'Seconds left before GitHub may be asked again, per installation (a secondary or primary rate limit).',
  ),
  yoke_webhook_deliveries_total: def(
    'counter',
    'process',
    ['event', 'redelivered'],
    'Webhook deliveries this process was sent, by event, and whether GitHub sent the same delivery before.',
  ),
} as const satisfies Record<string, MetricDef>;

export type MetricName = keyof typeof METRICS;

/**
 * How many series each metric can have at most, and what bounds that: yoke's code and the repositories that
 * need a person, never the number of runs, issues or repositories (one series where none is named).
 */
export const SERIES_BOUND: Partial<Record<MetricName, string>> = {
  yoke_runs_live: 'run kinds × (repositories with a live run, at most the cap, + 1)',
  yoke_repo_paused: 'repositories paused now + 1',
  yoke_repo_disabled: 'repositories disabled now + 1',
  yoke_candidates_waiting: 'spawn stages × why-not codes',
  yoke_budget_limit_usd: '(repositories with a budget + 1) × 2 periods',
  yoke_budget_held_usd: '(repositories with a budget + 1) × 2 periods',
  yoke_lander_verdicts_total: '2 verdicts',
  yoke_merges_total: '2 states',
  yoke_deployment_runs: 'statuses × (stages + 1)',
  yoke_deployment_stage_waits: 'stages × wait codes',
  yoke_deployment_waiting_seconds: 'stages',
  yoke_passes_total: 'triggers',
  yoke_pass_seconds: '12 buckets + sum + count',
  yoke_launches_total: 'run kinds × launch results',
  yoke_github_requests_total: 'methods × GitHub route templates (src/forge/github/routes.ts) × statuses',
  yoke_github_points_left: 'installations',
  yoke_github_primary_left: 'installations',
  yoke_github_backoff_seconds: 'installations',
  yoke_webhook_deliveries_total: 'events yoke subscribes to × 2',
};

/** METRICS as the markdown table docs/hosting.md carries. */
export function metricsTable(): string {
  const rows = keysOf(METRICS).map((name) => {
    const m: MetricDef = METRICS[name];
    return `| \`${name}\` | ${m.kind} | ${m.labels.map((l) => `\`${l}\``).join(', ') || ''} | ${SERIES_BOUND[name] ?? '1'} | ${m.scope === 'fleet' ? 'the leader' : 'each process'} | ${m.help} |`;
  });
  return (
    ['| metric | type | labels | series at most | served by | meaning |', '|---|---|---|---|---|---|', ...rows].join(
      '\n',
    ) + '\n'
  );
}
