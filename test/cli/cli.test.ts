import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/main.js';
import { startApi } from '../helpers/api-server.js';
import { makeHarness } from '../helpers/fleet.js';

let close: (() => Promise<void>) | null = null;
afterEach(async () => {
  await close?.();
  close = null;
});

async function cli(args: string[], env: Record<string, string | undefined>, over: { fetch?: typeof fetch } = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    env,
    fetch: over.fetch ?? fetch,
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('the yoke CLI', () => {
  it('prints the fleet report, and refuses a paused start with the command that recovers', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', {});
    h.forge.addIssue('acme/api', 1);
    await h.engine.schedulerTick();
    for (let i = 0; i < 3; i++) await h.store.repos.addFailure('acme/api', 3, h.clock.now());
    const api = await startApi(h, { tokens: ['op'] });
    close = api.close;
    const env = { YOKE_URL: api.url, YOKE_TOKEN: 'op' };

    const report = await cli(['fleet', 'report'], env);
    expect(report.code).toBe(0);
    expect(report.out).toContain('- acme/api: PAUSED, auto on, failures 3, cap 2');
    expect(report.out).toContain('    live ');
    expect(report.out).toContain(
      '    to recover: Comment `/yoke reset` on any issue of acme/api, or run `yoke repo reset acme/api`.',
    );

    const refused = await cli(['repo', 'start', 'acme/api', '1'], env);
    expect(refused).toEqual({
      code: 1,
      out: '',
      err: 'acme/api is paused: it reached 3 consecutive AFK failures, and only a reset lifts the pause.\nTo recover: Comment `/yoke reset` on any issue of acme/api, or run `yoke repo reset acme/api`.',
    });
    const reset = await cli(['repo', 'reset', 'acme/api'], env);
    expect([reset.code, reset.out]).toEqual([
      0,
      'Reset acme/api: 3 consecutive failures cleared and the pause lifted.',
    ]);
    expect((await h.store.repos.get('acme/api'))!.pausedSince).toBeNull();
  });

  it('says what to set when the token or the server is missing, and what to type for bad words', async () => {
    // Nothing listens at localhost:3000 in a test: a refused connection, as fetch reports it, without reaching out.
    const refused = (async () => {
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      });
    }) as unknown as typeof fetch;
    expect(await cli(['fleet', 'report'], {})).toMatchObject({
      code: 1,
      err: "No yoke token. Set YOKE_TOKEN (an operator token from the server's YOKE_API_TOKENS, or your own from YOKE_PERSON_TOKENS) or pass --token.",
    });
    const down = await cli(['fleet', 'report', '--json'], { YOKE_URL: 'http://127.0.0.1:9', YOKE_TOKEN: 'x' });
    expect(down.code).toBe(1);
    expect(down.err).toMatch(/^yoke at http:\/\/127\.0\.0\.1:9 \(YOKE_URL\) did not answer \(.+\)\.\nTo recover: /);
    // With YOKE_URL unset, the CLI says which address it tried, and that it was the default nobody set.
    const unset = await cli(['fleet', 'report'], { YOKE_TOKEN: 'x' }, { fetch: refused });
    expect(unset).toMatchObject({
      code: 1,
      err: 'yoke at http://localhost:3000 (the default: YOKE_URL is not set) did not answer (ECONNREFUSED).\nTo recover: check that yoke is running there, or set YOKE_URL to its address (or pass --url), e.g. YOKE_URL=https://yoke.example.com.',
    });
    const h = makeHarness();
    h.forge.addRepo('acme/api', {});
    await h.engine.schedulerTick();
    const api = await startApi(h, { tokens: ['op'] });
    close = api.close;
    expect(await cli(['repo', 'auto', 'acme/api', 'maybe'], { YOKE_URL: api.url, YOKE_TOKEN: 'op' })).toMatchObject({
      code: 1,
      err: 'Say "on" or "off", e.g. yoke repo auto acme/api on',
    });
    const unknown = await cli(['fleet', 'explode'], {});
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain("unknown command 'explode'");
  });

  it('says the auto loop as the next pass takes it, in the report and in repo status alike, and who set it', async () => {
    const h = makeHarness();
    h.forge.addRepo('acme/api', { auto: false });
    const api = await startApi(h, { tokens: ['op'] });
    close = api.close;
    const env = { YOKE_URL: api.url, YOKE_TOKEN: 'op' };
    const line = async () =>
      (await cli(['fleet', 'report'], env)).out.split('\n').find((l) => l.startsWith('- acme/api'));
    await h.store.repos.ensure('acme/api', 1, h.clock.now());
    expect(await line()).toBe('- acme/api: auto not read yet, failures 0, cap 2');
    await h.engine.schedulerTick();
    expect(await line()).toBe('- acme/api: auto off, failures 0, cap 2');
    expect((await cli(['repo', 'status', 'acme/api'], env)).out).toContain('- auto loop: off');
    await cli(['repo', 'auto', 'acme/api', 'on'], env);
    expect(await line()).toBe('- acme/api: auto on (set by yoke repo auto), failures 0, cap 2');
    expect((await cli(['repo', 'status', 'acme/api'], env)).out).toContain('- auto loop: on');
  });
});
