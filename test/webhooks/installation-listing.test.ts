import type nock from 'nock';
import { describe, expect, it, vi } from 'vitest';
import { createHmac } from 'node:crypto';
import {
  github,
  makeProbot,
  mockToken,
  publishedPayload,
  WEBHOOK_SECRET,
  type ProbotHarness,
} from '../helpers/probot.js';
import { isolateNock } from '../helpers/nock.js';

// SC10: an installation's listing of its repositories stands in between passes, as an idle repository's view does,
// until its slot of the idle probe period comes round (test/app.test.ts, GH05 SC02) or GitHub says the installation's
// repositories changed: then the next pass lists them again, whatever the listing's age, and the app's installations
// with them (an installation came or went).

isolateNock({ unmatched: true });

const installations = (scope: nock.Scope) =>
  scope
    .get('/app/installations')
    .query(true)
    .reply(200, [{ id: 1, account: { login: 'Codertocat' } }]);

/** The installation's repositories: none yet, then asked again with the listing's validator. */
const listing = (scope: nock.Scope, again = false) =>
  again
    ? scope.get('/installation/repositories').query(true).matchHeader('if-none-match', '"repos0"').reply(304)
    : scope
        .get('/installation/repositories')
        .query(true)
        .reply(200, { total_count: 0, repositories: [] }, { etag: '"repos0"' });

/** A first pass that lists the installation, and a second within the period that does not. */
async function listedOnce(): Promise<ProbotHarness> {
  const h = await makeProbot();
  listing(installations(mockToken(github())));
  await h.rt.engine.schedulerTick();
  // Within the idle probe period the listing stands in, and the app's installations too.
  const before = h.stats.requests;
  await h.rt.engine.schedulerTick();
  expect(h.stats.requests - before).toBe(0);
  return h;
}

/** A delivery's signature, as GitHub makes it with the app's webhook secret. */
const sign = (secret: string, payload: string) =>
  `sha256=${createHmac('sha256', secret).update(payload).digest('hex')}`;

/** GitHub's published delivery of an installation event, about installation 1. */
function delivery(name: string, action: string) {
  const payload = publishedPayload(name, action);
  payload.installation.id = 1;
  return payload;
}

describe("SC10 an installation's listing (Probot level)", () => {
  for (const [name, action] of [
    ['installation_repositories', 'added'],
    ['installation_repositories', 'removed'],
    ['installation', 'created'],
  ] as const)
    it(`SC10 a ${name}.${action} delivery has the next pass list the installation's repositories again, and asks for it`, async () => {
      const h = await listedOnce();
      const kicks = vi.spyOn(h.rt.engine, 'kick').mockResolvedValue(undefined as never);
      await h.probot.receive({ id: `delivery-${action}`, name, payload: delivery(name, action) } as never);
      expect(kicks).toHaveBeenCalledTimes(1);
      kicks.mockRestore();
      listing(installations(github()), true);
      const before = h.stats.requests;
      await h.rt.engine.schedulerTick();
      expect(h.stats.requests - before).toBe(2);
    });

  it('SC10 a delivery from a repository yoke has not seen lists its installation again; one from a repository it knows does not', async () => {
    const h = await listedOnce();
    const kicks = vi.spyOn(h.rt.engine, 'kick').mockResolvedValue(undefined as never);
    const labeled = delivery('issues', 'labeled');
    await h.rt.store.repos.ensure(labeled.repository.full_name, 1, h.clock.now());
    await h.probot.receive({ id: 'delivery-known', name: 'issues', payload: labeled } as never);
    let before = h.stats.requests;
    await h.rt.engine.schedulerTick();
    expect(h.stats.requests - before).toBe(0);
    // The same event from a repository new to the installation (GitHub announces no installation event for a
    // repository made in an installation that reads all of them).
    const unseen = delivery('issues', 'labeled');
    unseen.repository.full_name = 'Codertocat/Made-Today';
    unseen.repository.name = 'Made-Today';
    await h.probot.receive({ id: 'delivery-unseen', name: 'issues', payload: unseen } as never);
    kicks.mockRestore();
    listing(installations(github()), true);
    before = h.stats.requests;
    await h.rt.engine.schedulerTick();
    expect(h.stats.requests - before).toBe(2);
  });

  it('SC10 a forged installation_repositories delivery is refused before any handler: the listing still stands', async () => {
    const h = await listedOnce();
    const kicks = vi.spyOn(h.rt.engine, 'kick').mockResolvedValue(undefined as never);
    const payload = JSON.stringify(delivery('installation_repositories', 'added'));
    await expect(
      h.probot.webhooks.verifyAndReceive({
        id: 'forged-added',
        name: 'installation_repositories',
        payload,
        signature: sign('not-the-secret', payload),
      } as never),
    ).rejects.toThrow();
    expect(kicks).not.toHaveBeenCalled();
    const before = h.stats.requests;
    await h.rt.engine.schedulerTick();
    expect(h.stats.requests - before).toBe(0);
    // Signed with the app's secret, the same delivery is taken.
    await h.probot.webhooks.verifyAndReceive({
      id: 'signed-added',
      name: 'installation_repositories',
      payload,
      signature: sign(WEBHOOK_SECRET, payload),
    } as never);
    expect(kicks).toHaveBeenCalledTimes(1);
    kicks.mockRestore();
    listing(installations(github()), true);
    await h.rt.engine.schedulerTick();
  });
});
