import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// TR21: what the shipped workflows give each job, read from the files
// themselves. Each job asks for exactly its permissions; every action is
// pinned by commit; and no job that runs untrusted code (the agent, the
// PR's code under validation) runs any JavaScript action at all, since an
// action's main or post step there would hold the job's runtime token
// after that code ran.

interface Step {
  uses?: string;
  run?: string;
  name?: string;
  id?: string;
}
interface Job {
  permissions?: Record<string, string>;
  steps: Step[];
}
const read = (file: string) =>
  parse(readFileSync(file, 'utf8')) as { permissions?: unknown; jobs: Record<string, Job> };

// yoke-run.yml is the one for an agent of your own (.github/yoke/run.sh): the same split as the shipped agents.
const AGENTS = ['templates/agents/claude-code.yml', 'templates/agents/codex.yml', 'templates/yoke-run.yml'];
const ALL = [...AGENTS, 'templates/deploy.yml'];

describe('the shipped workflows (TR21)', () => {
  for (const file of AGENTS) {
    it(`TR21 ${file}: each job has exactly its permissions, and the jobs that run the agent or the PR's code use no action`, () => {
      const wf = read(file);
      expect(wf.permissions).toEqual({});
      expect(Object.fromEntries(Object.entries(wf.jobs).map(([name, j]) => [name, j.permissions]))).toEqual({
        agent: { contents: 'read', issues: 'read', 'pull-requests': 'read' },
        // deliver's contents: write is its own push when runs reach yoke through GitHub; report's read fetches the runner there.
        deliver: { contents: 'write', 'id-token': 'write' },
        validate: { contents: 'read' },
        report: { contents: 'read', 'id-token': 'write' },
      });
      for (const untrusted of ['agent', 'validate'])
        expect(
          wf.jobs[untrusted]!.steps.filter((s) => s.uses).map((s) => s.uses),
          `${file} ${untrusted}`,
        ).toEqual([]);
      // The agent's tools are contained before it starts; the agent is the job's last step.
      const agent = wf.jobs.agent!.steps;
      expect(agent.findIndex((s) => s.name === "Contain the agent's tools")).toBeLessThan(
        agent.findIndex((s) => s.id === 'work'),
      );
      expect(agent.at(-1)!.id).toBe('work');
      // TR35: the PR's code runs only through yoke's runner, contained, after bubblewrap is there and the runner checked.
      const validate = wf.jobs.validate!.steps;
      const at = (name: string) => validate.findIndex((s) => s.name === name);
      expect(at("Contain the PR's code")).toBeGreaterThan(0);
      expect(at("Contain the PR's code")).toBeLessThan(at('Validate'));
      expect(at("Get yoke's runner")).toBeLessThan(at('Validate'));
      expect(validate[at('Validate')]!.run).toBe('node "$RUNNER_TEMP/yoke-runner.mjs" agent validate');
      expect(JSON.stringify(validate)).not.toContain('validate.sh 2>&1');
      // No token is written into the checkout's git config for the agent to find.
      expect(agent[0]!.run).not.toMatch(/git config|remote add|persist/);
      // The result reaches deliver as job outputs, never as an uploaded file: the jobs that run untrusted code upload nothing.
      expect(JSON.stringify({ agent: wf.jobs.agent, validate: wf.jobs.validate })).not.toMatch(/artifact/i);
      // Only deliver and report hand a result back, as their last step, after yoke's runner alone has run in the job.
      for (const job of ['deliver', 'report']) {
        const steps = wf.jobs[job]!.steps as (Step & { if?: string; with?: Record<string, unknown> })[];
        const upload = steps.at(-1)!;
        expect(upload.uses, `${file} ${job}`).toMatch(/^actions\/upload-artifact@/);
        expect(upload.if).toBe("always() && inputs.reach == 'github'");
        // TR35: under the name the runner chose at random in this job, which nothing before it could take first.
        expect(upload.with).toMatchObject({
          name: '${{ steps.report.outputs.artifact }}',
          path: '${{ runner.temp }}/yoke-result/',
        });
        expect(steps.find((s) => s.id === 'report')?.run).toMatch(/yoke-runner\.mjs" agent (deliver|verdict)$/);
        expect(steps.filter((s) => s.uses).length).toBe(1);
        expect(steps.slice(0, -1).every((s) => s.run)).toBe(true);
      }
    });
  }

  for (const file of AGENTS) {
    it(`TR32 ${file}: the agent job cannot hand a result back: no OIDC token, no upload, no folder the upload reads`, () => {
      const agent = read(file).jobs.agent!;
      expect(agent.permissions!['id-token']).toBeUndefined();
      const text = JSON.stringify(agent);
      expect(text).not.toMatch(/upload-artifact|YOKE_RESULT_DIR|yoke-result/);
    });
  }

  it('TR21 the jobs that deliver, validate and report are the same in every agent workflow: only the agent differs', () => {
    const [first, ...rest] = AGENTS.map(read);
    for (const [i, wf] of rest.entries()) {
      for (const job of ['deliver', 'validate', 'report'])
        expect(wf.jobs[job], `${AGENTS[i + 1]} ${job}`).toEqual(first!.jobs[job]);
      expect((wf as { on?: unknown }).on).toEqual((first as { on?: unknown }).on);
    }
  });

  it("TR21 templates/yoke-run.yml runs your own agent through yoke's runner, contained, and hands it no secret it did not name", () => {
    const work = read('templates/yoke-run.yml').jobs.agent!.steps.find((s) => s.id === 'work') as Step & {
      env: Record<string, string>;
    };
    expect(work.run).toBe('node "$RUNNER_TEMP/yoke-runner.mjs" agent run');
    expect(work.env.YOKE_AGENT).toBe('command');
    expect(work.env.YOKE_AGENT_SECRETS).toBe('');
    expect(Object.values(work.env).filter((v) => String(v).includes('secrets.'))).toEqual([]);
  });

  it('TR21 every action in every shipped workflow is pinned by a full commit id', () => {
    for (const file of ALL) {
      for (const [name, job] of Object.entries(read(file).jobs)) {
        for (const s of job.steps)
          if (s.uses) expect(s.uses, `${file} ${name}`).toMatch(/^[\w.-]+\/[\w.-]+@[0-9a-f]{40}$/);
      }
    }
  });

  it("templates/deploy.yml's status reports write their answers nowhere: the Actions log shows the deploy, not GitHub's JSON", () => {
    const curls = Object.values(read('templates/deploy.yml').jobs)
      .flatMap((j) => j.steps)
      .flatMap((s) => (s.run ?? '').split('\n').filter((l) => /\bcurl\b/.test(l)));
    expect(curls.length).toBeGreaterThan(2);
    expect(curls.filter((l) => !/\s-o \/dev\/null\b/.test(l))).toEqual([]);
  });
});
