import { describe, expect, it } from 'vitest';
import { LeadershipLost, type Fence } from '../../src/kernel/fence.js';
import { FORGE_WRITES, fencedForge } from '../../src/forge/fenced.js';
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

describe('TR31 the fenced forge and launcher', () => {
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
