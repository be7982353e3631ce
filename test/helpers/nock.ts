import nock from 'nock';
import { afterEach, beforeEach, expect } from 'vitest';

/** Each test of the file starts with no mocks and no network, and must use every mock it made. */
export function isolateNock(): void {
  beforeEach(() => {
    nock.cleanAll();
    nock.disableNetConnect();
  });
  afterEach(() => {
    expect(nock.pendingMocks()).toEqual([]);
    nock.cleanAll();
    nock.enableNetConnect();
  });
}
