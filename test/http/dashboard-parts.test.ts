import { describe, expect, it } from 'vitest';
import { reasonOf } from '../../src/http/dashboard-parts.js';

describe("the dashboard's run reasons", () => {
  it("a failed run's reason is yoke's own, else the first line of what the run reported; a success shows none", () => {
    expect(reasonOf({ status: 'ended', outcome: 'failure', outcomeReason: null, summary: 'Error: issue #14 names no demo task\nat line 3' })).toBe('Error: issue #14 names no demo task');
    expect(reasonOf({ status: 'ended', outcome: 'timeout', outcomeReason: 'ran past its 60-minute budget', summary: 'half done' })).toBe('ran past its 60-minute budget');
    expect(reasonOf({ status: 'ended', outcome: 'success', outcomeReason: null, summary: 'Added shout()' })).toBe('');
    expect(reasonOf({ status: 'ended', outcome: 'failure', outcomeReason: null, summary: 'x'.repeat(300) })).toHaveLength(200);
  });
});
