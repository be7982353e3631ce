import { describe, expect, it } from 'vitest';
import { serialRun } from '../../src/qa/run-lock.js';

describe('one gate check of a run at a time', () => {
  it('runs the checks of one run one after another, even when one fails, and other runs alongside', async () => {
    const store = {};
    const log: string[] = [];
    const step = (name: string, ms: number, fail = false) => async () => {
      log.push(`${name} start`);
      await new Promise((r) => setTimeout(r, ms));
      log.push(`${name} end`);
      if (fail) throw new Error(name);
      return name;
    };
    const a = serialRun(store, 'dr-1', step('a', 20, true));
    const b = serialRun(store, 'dr-1', step('b', 1));
    const c = serialRun(store, 'dr-2', step('c', 1));
    await expect(a).rejects.toThrow('a');
    expect(await b).toBe('b');
    expect(await c).toBe('c');
    expect(log).toEqual(['a start', 'c start', 'c end', 'a end', 'b start', 'b end']);
  });
});
