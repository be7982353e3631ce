import { describe, expect, it } from 'vitest';
import { LeadershipLost, type Fence } from '../../src/kernel/fence.js';
import { FORGE_WRITES, fencedForge } from '../../src/forge/fenced.js';
import { GitHubForge } from '../../src/forge/github/github.js';
import type { Forge } from '../../src/forge/types.js';
import { fencedLauncher } from '../../src/launcher/fenced.js';
import type { Launcher } from '../../src/launcher/launcher.js';

// TR31: a leader's tick works through its fence: every write to GitHub, and
// every launch or cancel, passes it first; a shut fence lets none through.

const recording = <T extends object>(called: string[]): T =>
  new Proxy({} as T, {
    get: (_t, name) =>
      name === 'name' ? 'actions' : (..._args: unknown[]) => (called.push(String(name)), Promise.resolve(null)),
  });

const shut: Fence = {
  epoch: 4,
  check: async (step) => {
    throw new LeadershipLost(4, step);
  },
};

/**
 * What each of GitHubForge's methods sends to GitHub, found by calling it over an Octokit that records
 * request methods: independent of the table under test, so a write sorted as a read is caught.
 */
async function methodsThatWrite(): Promise<{ writes: string[]; called: string[] }> {
  const sent: string[] = [];
  const record = (route: string) => sent.push(String(route).split(' ')[0]!);
  const octokit = {
    request: async (route: string) => {
      record(route);
      // A ref that is not there yet (publishRunner then writes it); every other answer is an empty success.
      if (/^GET .*\/git\/ref/.test(route)) throw Object.assign(new Error('Not Found'), { status: 404 });
      return { status: 200, headers: {}, data: {} };
    },
    paginate: Object.assign(async (route: string) => (record(route), []), {
      iterator: async function* (route: string) {
        record(route);
      },
    }),
    // A GraphQL query reads; a mutation writes. The pull request is there, so a write that needs its id is reached.
    graphql: async (document: string) => (
      record(/^\s*mutation\b/.test(document) ? 'POST' : 'GET'),
      { repository: { pullRequest: { id: 'PR_1', headRefOid: 'a'.repeat(40) }, mergeQueue: null } }
    ),
  };
  const forge = new GitHubForge({
    appOctokit: async () => octokit as never,
    installationOctokit: async () => octokit as never,
    now: () => 0,
    botLogin: 'yoke[bot]',
  }) as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
  const repo = { owner: 'acme', name: 'api', fullName: 'acme/api', installationId: 1 };
  const check = {
    name: 'yoke/lander',
    status: 'completed',
    conclusion: 'success',
    externalId: 'r',
    detailsUrl: null,
    title: 't',
    summary: 's',
  };
  const argsOf: Record<string, unknown[]> = {
    createCheckRun: [repo, 'a'.repeat(40), check],
    updateCheckRun: [repo, 7, check],
    createDeploymentStatus: [repo, 7, { state: 'success', description: 'd' }],
    reviewProtectionRule: [repo, 7, { environment: 'production', state: 'approved', comment: 'c' }],
    publishRunner: [repo, 'e'.repeat(64), '// runner'],
  };
  const generic = [
    repo,
    7,
    'abc',
    { body: 'x', title: 't', labels: [], head: 'h', base: 'b', ref: 'r', sha: 'a'.repeat(40) },
    'merge',
  ];
  const writes: string[] = [];
  const called: string[] = [];
  const names = Object.getOwnPropertyNames(GitHubForge.prototype).filter((n) => n !== 'constructor');
  for (const name of names) {
    sent.length = 0;
    try {
      await forge[name]!(...(argsOf[name] ?? generic));
    } catch {
      /* an empty answer it cannot parse: what it sent is what counts */
    }
    if (sent.length) called.push(name);
    if (sent.some((m) => m !== 'GET')) writes.push(name);
  }
  return { writes, called };
}

describe('TR31 the fenced forge and launcher', () => {
  it('TR31 every method of the GitHub forge that sends GitHub anything but a GET is fenced, found by calling each one', async () => {
    const { writes, called } = await methodsThatWrite();
    // The probe reached GitHub from most methods, and found writes among them (it can see what it checks).
    expect(called.length).toBeGreaterThan(40);
    expect(writes).toEqual(
      expect.arrayContaining(['merge', 'createComment', 'publishRunner', 'reviewProtectionRule', 'enqueuePullRequest']),
    );
    expect(writes.filter((w) => !FORGE_WRITES.includes(w as never))).toEqual([]);
  });

  it("TR31 with the fence shut, none of the forge's writes reaches GitHub, and each names itself; reads go through", async () => {
    const called: string[] = [];
    const forge = fencedForge(recording<Forge>(called), shut);
    expect(FORGE_WRITES).toEqual(
      expect.arrayContaining([
        'merge',
        'createComment',
        'dispatchWorkflow',
        'reviewProtectionRule',
        'updateIssue',
        'createDeploymentStatus',
        'pinBranch',
        'mintPushToken',
      ]),
    );
    for (const name of FORGE_WRITES) {
      await expect((forge[name] as (...a: unknown[]) => Promise<unknown>)()).rejects.toThrow(
        `it stopped before ${name}`,
      );
    }
    expect(called).toEqual([]);
    await forge.getPull({ fullName: 'acme/api', owner: 'acme', name: 'api', installationId: 1 }, 4);
    await forge.readRepo(
      { fullName: 'acme/api', owner: 'acme', name: 'api', installationId: 1 },
      { claimLabel: 'x', configMaxAgeMs: 0 },
    );
    expect(called).toEqual(['getPull', 'readRepo']);
  });

  it('TR31 with the fence open, every write goes through as asked', async () => {
    const called: string[] = [];
    const steps: string[] = [];
    const forge = fencedForge(recording<Forge>(called), { epoch: 2, check: async (step) => void steps.push(step) });
    for (const name of FORGE_WRITES) await (forge[name] as (...a: unknown[]) => Promise<unknown>)();
    expect([called, steps]).toEqual([FORGE_WRITES, FORGE_WRITES]);
  });

  it('TR31 with the fence shut, a launch or a cancel never starts', async () => {
    const called: string[] = [];
    const launcher = fencedLauncher(recording<Launcher>(called), shut);
    await expect(launcher.start({ runId: 'r1' } as never)).rejects.toThrow('it stopped before launching run r1');
    await expect(launcher.cancel({ id: 'r2' } as never, {} as never)).rejects.toThrow(
      'it stopped before cancelling run r2',
    );
    await launcher.liveness({ id: 'r3' } as never, {} as never);
    expect(called).toEqual(['liveness']);
  });
});
