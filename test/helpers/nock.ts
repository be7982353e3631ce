import nock from 'nock';
import { afterEach, beforeEach, expect } from 'vitest';

/**
 * Each test of the file starts with no mocks and no network, and must use
 * every mock it made; with `unmatched`, a request no mock matched fails it too
 * (yoke may have swallowed the error it got).
 */
export function isolateNock(opts: { unmatched?: boolean } = {}): void {
  let unmatched: string[] = [];
  const onNoMatch = (req: { method?: string; path?: string; href?: string }) =>
    unmatched.push(`${req.method} ${req.path ?? req.href}`);
  beforeEach(() => {
    nock.cleanAll();
    nock.disableNetConnect();
    unmatched = [];
    if (opts.unmatched) nock.emitter.on('no match', onNoMatch);
  });
  afterEach(() => {
    nock.emitter.removeListener('no match', onNoMatch);
    expect(unmatched).toEqual([]);
    expect(nock.pendingMocks()).toEqual([]);
    nock.cleanAll();
    nock.enableNetConnect();
  });
}
