import { parse as parseYaml } from 'yaml';
import { CONFIG_PATH } from '../config/repo-config.js';
import type { CheckoutView } from './checkout.js';
import { fieldOf } from '../kernel/guards.js';

// `yoke init --delivery`: the delivery half, offline, in a checkout. It writes
// templates/deploy.yml as the deploy workflow and a deploy.sh to fill in,
// adds a `delivery:` section (staging, staging-qa, production on Actions) to
// the opt-in file when it has none, and prints the environment settings that
// make yoke's QA the gate GitHub enforces. It never overwrites a file, or a
// delivery section, that is there. Deciding is pure; writing is the caller's.

export const DEPLOY_WORKFLOW_PATH = '.github/workflows/deploy.yml';
export const DEPLOY_SCRIPT_PATH = '.github/yoke/deploy.sh';

export const DELIVERY_SECTION = [
  '',
  '# Delivery (written by yoke init --delivery): merged work goes to staging, is QA-ed there,',
  "# then goes to production, whose environment holds every job for yoke's QA gate.",
  'delivery:',
  '  stages:',
  '    - { name: staging, kind: deploy, workflow: deploy.yml }',
  '    # Checks the QA plans its members attach (label qa:PLAN); a run in which none does stops here.',
  '    # List plans every run checks under delivery.run_plans, or say allow_empty: true to pass with none.',
  '    - { name: staging-qa, kind: qa, allow_empty: false }',
  '    - { name: production, kind: deploy, workflow: deploy.yml }',
  '',
].join('\n');

export const DEPLOY_SCRIPT = [
  '#!/usr/bin/env bash',
  "# yoke's deploy workflow (.github/workflows/deploy.yml) runs this in a job that targets",
  '# $YOKE_ENVIRONMENT, with its secrets, at the commit to deploy ($YOKE_COMMIT, checked out here).',
  '# Exit 0 when the deploy succeeded; anything else fails the stage. Written by yoke init --delivery.',
  'set -euo pipefail',
  'echo "Edit .github/yoke/deploy.sh to deploy $YOKE_COMMIT to $YOKE_ENVIRONMENT." >&2',
  'exit 1',
  '',
].join('\n');

export interface DeliveryInitPlan {
  writes: { path: string; content: string; executable: boolean }[];
  /** The opt-in file gets the delivery section appended (it had none). */
  appendsDelivery: boolean;
  kept: string[];
}

/** What `--delivery` does in this checkout; `writesOptIn`: the same run writes the opt-in file (with --agent), which then carries the section. */
export function planDeliveryInit(workflow: string, c: CheckoutView, writesOptIn: boolean): DeliveryInitPlan {
  const wanted = [
    { path: DEPLOY_WORKFLOW_PATH, content: workflow, executable: false },
    { path: DEPLOY_SCRIPT_PATH, content: DEPLOY_SCRIPT, executable: true },
  ];
  const optIn = c.read(CONFIG_PATH);
  let hasDelivery = false;
  try {
    hasDelivery = optIn !== null && fieldOf(parseYaml(optIn), 'delivery') !== undefined;
  } catch {
    // An opt-in file that does not parse is left as it is: `yoke config check` names what to fix.
    hasDelivery = true;
  }
  return {
    writes: wanted.filter((w) => !c.exists(w.path)),
    appendsDelivery: writesOptIn || (optIn !== null && !hasDelivery),
    kept: [
      ...wanted.filter((w) => c.exists(w.path)).map((w) => w.path),
      ...(optIn !== null && hasDelivery ? [`${CONFIG_PATH} (delivery:)`] : []),
    ],
  };
}

/** What yoke init --delivery says: what it wrote and kept, then the environment settings to make on GitHub. */
export function deliveryInitReport(plan: DeliveryInitPlan, optInExists: boolean, app: string): string {
  return [
    ...plan.writes.map((w) => `wrote ${w.path}`),
    ...(plan.appendsDelivery
      ? [
          `appended delivery: (staging, staging-qa, production) to the end of ${CONFIG_PATH}, which had none; nothing else in it changed`,
        ]
      : []),
    ...plan.kept.map((p) => `kept  ${p} (it is there already; yoke init never overwrites)`),
    ...(!optInExists && !plan.appendsDelivery
      ? [
          `No ${CONFIG_PATH} yet: run yoke init --agent … --delivery, or add the delivery: section to it once it is there.`,
        ]
      : []),
    '',
    'Then, on GitHub (Settings, Environments):',
    `1. production: New environment, then under Deployment protection rules tick \`${app}\` (yoke's app) and save. Without it yoke's QA gate is advisory only: the fleet report warns until it is on.`,
    '2. production and staging, Deployment branches and tags: allow `yoke/deploy/*` (yoke runs each deploy on a branch pinned to the commit it delivers) and any branch you deploy from by hand.',
    `3. Put your deploy in ${DEPLOY_SCRIPT_PATH}; it runs in the environment's job, with the environment's secrets.`,
    '4. Attach QA plans (.github/yoke/qa/), commit and push, then deliver: `yoke deployment-runs create OWNER/REPO` and `yoke watch deploy -- RUN-ID`.',
  ].join('\n');
}
