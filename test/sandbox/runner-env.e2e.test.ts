import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_REPO, STATE_TOKEN } from '../../sandbox/demo-repo.js';
import { Sandbox } from '../../sandbox/sandbox.js';
import { unclaimedWarnings } from '../helpers/sandbox-log.js';

// TR22: a job on the sandbox's Actions gets what a job on GitHub gets, and
// nothing of the sandbox's own: the demo's agent and deploy carry their
// settings in the repository's files, as a real repository's would.

const WORKFLOW = [
  'name: env',
  'on: { workflow_dispatch: {} }',
  'permissions: {}',
  'jobs:',
  '  env:',
  '    runs-on: ubuntu-latest',
  '    steps:',
  `      - run: env | cut -d= -f1 | sort > ${STATE_TOKEN}/job-env.txt`,
  '',
].join('\n');

/** What GitHub gives every step of a job: its default variables, PATH and HOME. */
const GITHUB_GIVES = /^(CI|HOME|PATH|PWD|SHLVL|_|OLDPWD|GITHUB_[A-Z_]+|RUNNER_[A-Z_]+|ACTIONS_[A-Z_]+)$/;

let s: Sandbox;
beforeAll(async () => {
  s = new Sandbox({
    launcher: 'actions',
    failAgent: 0,
    tasks: [],
    tickSeconds: 1,
    files: { '.github/workflows/env.yml': WORKFLOW },
  });
  await s.start();
}, 60_000);
afterAll(async () => {
  const unclaimed = unclaimedWarnings(s, []);
  await s?.stop();
  expect(unclaimed).toEqual([]);
});

describe("a job's environment", () => {
  it('TR22 holds only what GitHub would give it: no YOKE_SANDBOX_* variable, nothing of the sandbox', async () => {
    const res = await fetch(`${s.forge.url}/api/v3/repos/${DEMO_REPO}/actions/workflows/env.yml/dispatches`, {
      method: 'POST',
      headers: { authorization: `token ${s.maintainerToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ref: 'main' }),
    });
    expect(res.status).toBe(204);
    const file = join(s.dataDir, 'state', 'job-env.txt');
    await s.waitUntil(
      () => existsSync(file) && readFileSync(file, 'utf8').length > 0,
      20_000,
      'the job to write its environment',
    );
    const names = readFileSync(file, 'utf8').trim().split('\n');
    expect(names).toContain('GITHUB_TOKEN');
    expect(names).toContain('GITHUB_RUN_NUMBER');
    expect(names.filter((n) => !GITHUB_GIVES.test(n))).toEqual([]);
  }, 40_000);
});
