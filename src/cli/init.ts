import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { AGENTS } from '../agent/clis/registry.js';
import type { AgentName } from '../agent/clis/adapter.js';
import { SCHEMA_MODELINE, SCHEMA_PATH, optInJsonSchema } from '../config/schema.js';
import { CONFIG_PATH } from '../config/repo-config.js';
import { LANDINGS, landerRuleset, type Landing } from '../config/landing.js';
import { CliFailure, type CliIo } from './client.js';
import type { CheckoutView } from './checkout.js';
import { DELIVERY_SECTION, deliveryInitReport, planDeliveryInit } from './init-delivery.js';
import { fieldOf, isOneOf, keysOf } from '../kernel/guards.js';

// `yoke init --agent claude-code|codex [DIR]`: in a checkout of the user's
// repository, with no network, writes the opt-in file, the agent's workflow
// and a validate.sh that runs the project's tests, found from its files.
// `--delivery` sets up the delivery half too (init-delivery.ts).
// It never overwrites a file that is there: a second run changes nothing.
// Deciding is pure (planInit); writing is the caller's.

export const WORKFLOW_PATH = '.github/workflows/yoke-run.yml';
export const VALIDATE_PATH = '.github/yoke/validate.sh';

export interface TestCommand {
  /** What yoke init found, in words (`package.json with a test script`). */
  found: string;
  lines: string[];
}

const NPM_NO_TEST = /no test specified/;
/** Where validate.sh makes a Python project's virtual environment: the runner's temporary folder, outside the checkout. */
const PY_VENV = '${RUNNER_TEMP:-/tmp}/yoke-venv';
/** The pytest validate.sh installs when the project's own requirements bring none. */
export const PYTEST_VERSION = '8.3.5';

/** The project's tests, from its files: npm, pytest, go, cargo, then make. */
export function detectTestCommand(c: CheckoutView): TestCommand | null {
  const pkg = c.read('package.json');
  if (pkg !== null) {
    let test: unknown;
    try {
      test = fieldOf(fieldOf(JSON.parse(pkg), 'scripts'), 'test');
    } catch {
      test = undefined;
    }
    if (typeof test === 'string' && !NPM_NO_TEST.test(test)) {
      const install = c.exists('package-lock.json') || c.exists('npm-shrinkwrap.json') ? 'npm ci' : 'npm install';
      return { found: 'package.json with a test script', lines: [install, 'npm test'] };
    }
  }
  const py = ['pyproject.toml', 'setup.py', 'setup.cfg', 'pytest.ini', 'tox.ini', 'requirements.txt'].find((f) =>
    c.exists(f),
  );
  if (py) {
    const install = c.exists('requirements.txt')
      ? ['python -m pip install -r requirements.txt']
      : c.exists('pyproject.toml') || c.exists('setup.py')
        ? ['python -m pip install -e .']
        : [];
    // A virtual environment of its own: the system pip refuses to install on Ubuntu 24.04's runners (PEP 668).
    return {
      found: `${py} (Python)`,
      lines: [
        `python3 -m venv --system-site-packages "${PY_VENV}"`,
        `. "${PY_VENV}/bin/activate"`,
        ...install,
        `python -m pytest --version >/dev/null 2>&1 || python -m pip install pytest==${PYTEST_VERSION}`,
        'python -m pytest',
      ],
    };
  }
  if (c.exists('go.mod')) return { found: 'go.mod', lines: ['go test ./...'] };
  if (c.exists('Cargo.toml')) return { found: 'Cargo.toml', lines: ['cargo test'] };
  const make = c.read('Makefile');
  if (make !== null && /^test\s*:/m.test(make)) return { found: 'a Makefile with a test target', lines: ['make test'] };
  return null;
}

export function validateScript(t: TestCommand | null): string {
  const head = [
    '#!/usr/bin/env bash',
    "# yoke's lander runs this from the default branch against a claim PR's code:",
    '# exit 0 accepts the PR, anything else rejects it. A PR cannot change it.',
  ];
  if (!t) {
    return [
      ...head,
      '# yoke init found no test command (npm, pytest, go, cargo or make): write yours here.',
      'set -euo pipefail',
      'echo "Edit .github/yoke/validate.sh to run this project\'s tests." >&2',
      'exit 1',
      '',
    ].join('\n');
  }
  return [...head, `# Written by yoke init, which found ${t.found}.`, 'set -euo pipefail', ...t.lines, ''].join('\n');
}

export function optInFile(agent: AgentName): string {
  return [
    // Editors with YAML support complete and check the file against the schema yoke init writes beside it.
    SCHEMA_MODELINE,
    `# yoke's opt-in (docs/configuration.md in yoke's repository lists every field). Written by yoke init --agent ${agent}.`,
    '# Label an issue yoke:afk and yoke works on it.',
    'afk_label: yoke:afk',
    'auto: true',
    "# Autoland merges a claim PR once yoke's lander accepts its head, with nobody looking. A PR that",
    "# changes a protected path waits for a writer's approval instead. Set enabled: false to merge by hand.",
    'autoland: { enabled: true, merge_method: squash }',
    'fix_forward: { enabled: true, max_attempts: 2 }',
    'launcher: { workflow: yoke-run.yml }',
    "# The agent's tools reach only the model's endpoint and these hosts (e.g. registry.npmjs.org).",
    'agent: { max_turns: 60, max_usd: 5, network: { allow: [] } }',
    "# Always protected: .github/** and the agents' settings (CLAUDE.md, AGENTS.md, .claude/**, .mcp.json, .codex/**). Add your own globs.",
    'protected_paths: []',
    '',
  ].join('\n');
}

export interface InitPlan {
  writes: { path: string; content: string; executable: boolean }[];
  kept: string[];
  tests: TestCommand | null;
  /** The agent the workflow already there runs (its `YOKE_AGENT`), when it names one yoke knows. */
  keptAgent: AgentName | null;
}

export function planInit(agent: AgentName, workflow: string, c: CheckoutView): InitPlan {
  const tests = detectTestCommand(c);
  const wanted = [
    { path: CONFIG_PATH, content: optInFile(agent), executable: false },
    { path: WORKFLOW_PATH, content: workflow, executable: false },
    { path: VALIDATE_PATH, content: validateScript(tests), executable: true },
    { path: SCHEMA_PATH, content: `${JSON.stringify(optInJsonSchema(), null, 2)}\n`, executable: false },
  ];
  const named = /^\s*YOKE_AGENT:\s*([\w-]+)\s*$/m.exec(c.read(WORKFLOW_PATH) ?? '')?.[1];
  return {
    writes: wanted.filter((w) => !c.exists(w.path)),
    kept: wanted.filter((w) => c.exists(w.path)).map((w) => w.path),
    tests,
    keptAgent: named !== undefined && isOneOf(keysOf(AGENTS), named) ? named : null,
  };
}

/** What the opt-in file yoke init writes switches on, each with how to turn it off. */
const SWITCHED_ON = [
  `What ${CONFIG_PATH} switches on:`,
  '- auto: yoke starts an AFK run for each issue labelled yoke:afk on its own, within the cap. Set auto: false to start runs only with `/yoke start`.',
  "- autoland: a PR yoke's lander accepts merges unattended at the head it validated, except one that changes a protected path (.github/**, the agents' settings, protected_paths), which waits for a writer's approval. Set autoland.enabled: false to merge by hand.",
  '- fix_forward: a rejected PR gets up to 2 fix runs. Set fix_forward.enabled: false to fix by hand.',
  "- agent: at most 60 turns and $5 a run; its tools reach the model's endpoint and nothing else, until you list hosts in agent.network.allow.",
];

/** What yoke init says: what it wrote and kept, then the secrets and settings the repository needs. */
export function initReport(
  agent: AgentName,
  plan: InitPlan,
  appId: number | null = null,
  landing: Landing = 'pr',
): string {
  // The secret to add is the one the workflow in the checkout needs, whichever agent was asked for.
  const runs = plan.keptAgent ?? agent;
  const a = AGENTS[runs];
  const other = runs !== agent;
  return [
    ...plan.writes.map((w) => `wrote ${w.path}`),
    ...plan.kept.map((p) =>
      other && p === WORKFLOW_PATH
        ? `kept  ${p}: it runs ${runs}, not ${agent}. To switch to ${agent}, delete it and run yoke init --agent ${agent} again (then add ${AGENTS[agent].credentials.join(' or ')} instead of the secret below).`
        : `kept  ${p} (it is there already; yoke init never overwrites)`,
    ),
    ...(plan.writes.length === 0 ? ['Nothing changed.'] : []),
    plan.tests
      ? `validate.sh runs: ${plan.tests.lines.join(' && ')} (found ${plan.tests.found}).`
      : 'No test command was found: edit .github/yoke/validate.sh to run your tests.',
    ...(plan.writes.some((w) => w.path === CONFIG_PATH) ? ['', ...SWITCHED_ON] : []),
    '',
    'Next:',
    `1. Add the repository secret ${a.credentials.join(' (or ')}${a.credentials.length > 1 ? ')' : ''}: Settings → Secrets and variables → Actions.`,
    "2. Install yoke's GitHub App on the repository. With YOKE_RUNS_REACH=github its runs need no URL of yoke's (they hand results back through GitHub); otherwise GitHub's runners must reach it at YOKE_PUBLIC_URL.",
    '3. No repository setting needs switching on: yoke opens the claim PR itself, so "Allow GitHub Actions to create and approve pull requests" can stay off, and your CI runs on the PR.',
    ...protectStep(landing, appId),
    '5. Commit and push these files to the default branch, then label an issue yoke:afk.',
  ].join('\n');
}

/** Step 4 of yoke init's next steps: the ruleset for the way it lands, ready for `gh api`, and what else that way needs. */
function protectStep(landing: Landing, appId: number | null): string[] {
  const how: Record<Landing, string> = {
    pr: 'Landing through the PR (the default): yoke merges each accepted PR by its merge_method, after reading the base again.',
    'fast-forward':
      "Landing by fast-forward: also set autoland.fast_forward: true in .github/yoke.yml. The branch moves to the very commit the lander validated (a merge commit yoke builds, whatever merge_method says), and GitHub refuses the move if anything else landed first. A rule that also requires pull requests needs yoke's app in its bypass_actors.",
    queue:
      "Landing through GitHub's merge queue: the ruleset's merge_queue rule makes GitHub build each merge group, and yoke validates every group's commit (the app needs Merge queues: read and write). Set the queue's merge_method to the one .github/yoke.yml names.",
  };
  return [
    "4. Protect the default branch (Settings → Rules → Rulesets, or branch protection): require the status check yoke/lander, and leave yoke's app off the bypass list, so nothing merges that its lander did not accept at that head. As a ruleset:",
    `   gh api repos/OWNER/REPO/rulesets --input - <<'JSON'\n   ${landerRuleset(appId, landing)}\n   JSON`,
    ...(appId === null
      ? [
          "   Replace APP_ID with yoke's App ID (its app settings page, or yoke init --app-id N): the check then counts only from yoke's app, not from any workflow or person who can post a status.",
        ]
      : []),
    `   ${how[landing]}`,
    `   The other ways: yoke init --landing ${LANDINGS.filter((l) => l !== landing).join(' or ')} prints theirs; docs/landing.md says when each fits.`,
  ];
}

function readTemplate(name: string): string {
  return readFileSync(new URL(`../../templates/${name}.yml`, import.meta.url), 'utf8');
}

const writeAll = (root: string, writes: readonly { path: string; content: string; executable: boolean }[]) => {
  for (const w of writes) {
    mkdirSync(dirname(join(root, w.path)), { recursive: true });
    writeFileSync(join(root, w.path), w.content, { mode: w.executable ? 0o755 : 0o644 });
  }
};

export function registerInitCommand(program: Command, io: CliIo): void {
  program
    .command('init [dir]')
    .description(
      "set a checkout of your repository up for yoke: the opt-in file, the agent's workflow and validate.sh; with --delivery, the deploy workflow and the delivery stages (offline; it never overwrites a file, and --delivery only appends a delivery: section to an opt-in file that has none)",
    )
    .option('--agent <name>', `the agent: ${Object.keys(AGENTS).join(' or ')}`)
    .option(
      '--delivery',
      'also (or only) the delivery half: templates/deploy.yml, deploy.sh, the delivery: section and the environment settings to make',
    )
    .option('--app <slug>', "yoke's GitHub App as it is named where you installed it", 'yoke')
    .option('--app-id <id>', "yoke's App ID, which the ruleset it prints pins yoke/lander to (default: APP_ID)")
    .option(
      '--landing <way>',
      `how yoke lands an accepted PR: ${LANDINGS.join(', ')} (docs/landing.md); the ruleset it prints is that way's`,
      'pr',
    )
    .action(
      (
        dir: string | undefined,
        opts: { agent?: string; delivery?: boolean; app: string; appId?: string; landing: string },
      ) => {
        if (!isOneOf(LANDINGS, opts.landing))
          throw new CliFailure(
            `--landing is ${JSON.stringify(opts.landing)}; yoke lands ${LANDINGS.join(', ')} (docs/landing.md says when each fits), e.g. yoke init --agent claude-code --landing queue`,
          );
        const landing = opts.landing;
        if (opts.agent === undefined && !opts.delivery)
          throw new CliFailure(
            'Name what to set up: yoke init --agent claude-code (or codex), yoke init --delivery, or both.',
          );
        const agent = opts.agent;
        if (agent !== undefined && !isOneOf(keysOf(AGENTS), agent))
          throw new CliFailure(
            `--agent is ${JSON.stringify(agent)}; yoke knows ${Object.keys(AGENTS).join(' and ')}, e.g. yoke init --agent claude-code`,
          );
        const idText = opts.appId ?? io.env.APP_ID;
        if (idText !== undefined && !/^[1-9][0-9]{0,9}$/.test(idText))
          throw new CliFailure(
            `${opts.appId !== undefined ? '--app-id' : 'APP_ID'} is ${JSON.stringify(idText)}; give yoke's App ID, a number (its app settings page), e.g. yoke init --app-id 123456`,
          );
        const appId = idText === undefined ? null : Number(idText);
        const root = resolve(dir ?? '.');
        if (!existsSync(join(root, '.git')))
          throw new CliFailure(
            `${root} is not a git checkout: run yoke init in a clone of your repository, or name one: yoke init ${agent ? `--agent ${agent}` : '--delivery'} PATH`,
          );
        const view: CheckoutView = {
          exists: (p) => existsSync(join(root, p)),
          read: (p) => (existsSync(join(root, p)) ? readFileSync(join(root, p), 'utf8') : null),
        };
        const optInExisted = view.exists(CONFIG_PATH);
        const delivery = opts.delivery
          ? planDeliveryInit(readTemplate('deploy'), view, agent !== undefined && !optInExisted)
          : null;
        const out: string[] = [];
        if (agent) {
          const plan = planInit(agent, readTemplate(`agents/${agent}`), view);
          writeAll(root, plan.writes);
          out.push(initReport(agent, plan, appId, landing));
        }
        if (delivery) {
          writeAll(root, delivery.writes);
          if (delivery.appendsDelivery) appendFileSync(join(root, CONFIG_PATH), DELIVERY_SECTION);
          out.push(deliveryInitReport(delivery, view.exists(CONFIG_PATH), opts.app));
        }
        io.out(out.join('\n\n'));
      },
    );
}
