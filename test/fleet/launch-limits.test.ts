import { describe, expect, it } from 'vitest';
import { defaultRepoConfig, parseRepoConfig, type RepoConfig } from '../../src/config/repo-config.js';
import { readRunFacts } from '../../src/agent/facts.js';
import type { Candidate } from '../../src/fleet/candidate.js';
import { rejectionFor, runLimits } from '../../src/fleet/runs/launch.js';
import { launchEnv, limitsJson, type LaunchSpec } from '../../src/launcher/launcher.js';
import type { Run } from '../../src/store/fleet/runs.js';

// What an agent run is handed at launch: its turn and spend limits, and for a
// fix the rejection it repairs; and that the runner reads the command
// launcher's environment as yoke wrote it.

const config = (yaml: Record<string, unknown>): RepoConfig => {
  const r = parseRepoConfig(yaml);
  if (r.state !== 'valid') throw new Error(JSON.stringify(r));
  return r.config;
};

describe("an agent run's limits", () => {
  it("BU02 BU04 take the opt-in file's turns; the dollars of a run that calls the model are what it reserved, its whole limit; a lander's are the file's", () => {
    const c = config({ agent: { max_turns: 25, max_usd: 5 }, budget: { daily_usd: 10 } });
    expect(runLimits({ config: defaultRepoConfig() }, 'afk_auto', null)).toEqual({ maxTurns: 60, maxUsd: null });
    expect(runLimits({ config: c }, 'afk_auto', 5)).toEqual({ maxTurns: 25, maxUsd: 5 });
    expect(runLimits({ config: c }, 'fix', 5)).toEqual({ maxTurns: 25, maxUsd: 5 });
    // A run that calls the model where a budget applies and the file sets no limit reserves the default, and is held to it.
    expect(runLimits({ config: defaultRepoConfig() }, 'afk_manual', 5)).toEqual({ maxTurns: 60, maxUsd: 5 });
    expect(runLimits({ config: c }, 'lander', 0)).toEqual({ maxTurns: 25, maxUsd: 5 });
  });

  it("TR20 the opt-in file's agent.network.allow goes out with the limits; a host that is not one is refused naming the field", () => {
    const facts = (c: RepoConfig) => ({ config: c });
    const c = config({ agent: { network: { allow: ['registry.npmjs.org', '*.pythonhosted.org'] } } });
    expect(runLimits(facts(c), 'afk_auto', null)).toEqual({
      maxTurns: 60,
      maxUsd: null,
      networkAllow: ['registry.npmjs.org', '*.pythonhosted.org'],
    });
    expect(limitsJson(runLimits(facts(c), 'afk_auto', null))).toBe(
      '{"max_turns":60,"network_allow":["registry.npmjs.org","*.pythonhosted.org"]}',
    );
    const bad = parseRepoConfig({ agent: { network: { allow: ['https://evil.example/x'] } } });
    expect(bad).toEqual({
      state: 'invalid',
      reason: expect.stringContaining(
        'agent.network.allow lists host names such as registry.npmjs.org or *.pythonhosted.org',
      ),
    });
  });

  it('a fix carries the newest rejection of its PR, cut to its end', () => {
    const c = { kind: 'fix', prNumber: 9, headSha: 'cd2cfd2' } as Candidate;
    const lander = (summary: string | null, verdict: 'accept' | 'reject', pr = 9) =>
      ({ kind: 'lander', prNumber: pr, verdict, summary, headSha: 'cd2cfd2' }) as Run;
    expect(
      rejectionFor(c, [
        lander('old failure', 'reject'),
        lander('other PR', 'reject', 8),
        lander('newer failure', 'reject'),
      ]),
    ).toBe('newer failure');
    expect(rejectionFor(c, [lander(null, 'reject')])).toBe('The lander rejected #9 at cd2cfd2.');
    expect(rejectionFor({ ...c, kind: 'afk_auto' } as Candidate, [lander('x', 'reject')])).toBeNull();
    // TR33: a fix of a head the lander accepted (one writers asked for) carries no older head's rejection.
    expect(rejectionFor({ ...c, headSha: 'eeeeeee' } as Candidate, [lander('old head', 'reject')])).toBeNull();
    expect(rejectionFor(c, [lander('failed', 'reject'), lander('passed', 'accept')])).toBeNull();
    const long = rejectionFor(c, [lander(`${'x'.repeat(9000)}FAIL at the end`, 'reject')])!;
    expect(long.length).toBe(8001);
    expect(long.endsWith('FAIL at the end')).toBe(true);
  });

  const ASK = {
    source: 'review',
    author: 'maint',
    writtenOn: null,
    text: 'Trim first.',
    comments: [{ path: 'lib/a.js', line: 2, diffHunk: '@@ -1 +1 @@', body: 'here' }],
  };

  it("the runner reads the command launcher's environment as yoke writes it", () => {
    const spec: LaunchSpec = {
      runId: 'r-fix',
      kind: 'fix',
      repo: { owner: 'acme', name: 'api', fullName: 'acme/api', installationId: 1 },
      subject: 'pr#9',
      issueNumber: 3,
      prNumber: 9,
      headSha: 'a'.repeat(40),
      baseSha: null,
      stack: [],
      landSha: null,
      deadline: Date.UTC(2026, 11, 1, 12),
      secret: 's3cret',
      apiUrl: 'https://yoke.example.test/',
      workflow: 'yoke-run.yml',
      ref: 'main',
      limits: { maxTurns: 25, maxUsd: 2.5, networkAllow: ['registry.npmjs.org'] },
      rejection: JSON.stringify({ rejection: 'FAIL count-words.test.js', asks: [ASK] }),
    };
    expect(readRunFacts(launchEnv(spec))).toEqual({
      ok: true,
      facts: {
        runId: 'r-fix',
        kind: 'fix',
        repo: 'acme/api',
        issueNumber: null,
        prNumber: 9,
        headSha: 'a'.repeat(40),
        deadline: Date.UTC(2026, 11, 1, 12),
        apiUrl: 'https://yoke.example.test',
        reach: 'api',
        limits: { maxTurns: 25, maxUsd: 2.5, networkAllow: ['registry.npmjs.org'] },
        rejection: 'FAIL count-words.test.js',
        asks: [ASK],
      },
    });
    // TR33: text that is not a brief is the lander's rejection alone, even when the PR's code printed a brief's shape.
    const forged = JSON.stringify({ rejection: 'x', asks: [ASK], extra: 1 });
    expect(readRunFacts({ ...launchEnv(spec), YOKE_REJECTION: forged })).toMatchObject({
      ok: true,
      facts: { rejection: forged, asks: [] },
    });
    expect(readRunFacts({ ...launchEnv(spec), YOKE_SUBJECT: 'issue#3' })).toEqual({
      ok: false,
      error: 'YOKE_SUBJECT issue#3 does not fit a fix run (an AFK run works on issue#N, a fix on pr#N)',
    });
    expect(readRunFacts({ YOKE_RUN_KIND: 'lander' })).toEqual({
      ok: false,
      error:
        'YOKE_RUN_ID is not set; YOKE_RUN_KIND is afk_manual, afk_auto or fix (a lander runs no agent); YOKE_SUBJECT is not set; YOKE_DEADLINE is not set; YOKE_API_URL is not set',
    });
  });
});
