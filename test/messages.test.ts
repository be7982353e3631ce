import { describe, expect, it } from 'vitest';
import { CODE_INFO, CODES, makeRefusal } from '../src/codes.js';
import {
  autoLoopSet,
  commandReply,
  disabledNotice,
  fixExhaustedNotice,
  landQueued,
  mergeRefusedNotice,
  pauseNotice,
  refusalText,
  repoReset,
  repoStatusReport,
  startQueued,
  verdictComment,
} from '../src/messages.js';

// Every comment yoke writes, compared whole: a change of wording is a change of this file.

describe('the messages yoke writes', () => {
  it('SP15 the pause notice names the count and the commands that lift the pause', () => {
    expect(pauseNotice('acme/api', 3, 3)).toBe(
      'yoke paused acme/api after 3 consecutive AFK failures: the auto loop is stopped and manual starts are refused until someone resets it.\n\n' +
        '**To recover:** Comment `/yoke reset` on any issue of acme/api, or `POST /yoke/api/repos/acme/api/reset`.',
    );
  });

  it('GH01 the disabled notice gives the reason and the file to fix', () => {
    expect(disabledNotice('acme/api', '.github/yoke.yml is not valid: cap: Unrecognized key')).toBe(
      'yoke has disabled acme/api: .github/yoke.yml is not valid: cap: Unrecognized key\n\n' +
        '**To recover:** Fix `.github/yoke.yml` on the default branch of acme/api; yoke re-reads it on its next pass.',
    );
  });

  it('GH03 the merge-refused notice names the PR, the short head and GitHub’s reason', () => {
    expect(mergeRefusedNotice(7, '0123456789abcdef', 'Head branch was modified.')).toBe(
      'yoke did not merge this PR. GitHub refused to merge #7 at 0123456: Head branch was modified.\n\n' +
        '**To recover:** Resolve the refusal, then comment `/yoke land` on #7 for a fresh lander.',
    );
  });

  it('SP19 the fix-exhausted notice mentions the author once and says what yoke did', () => {
    expect(fixExhaustedNotice('yoke-agent', 7, 2)).toBe(
      '@yoke-agent #7 was rejected again after 2 fix runs. yoke has stopped fixing it and labelled it `yoke:stuck`.\n\n' +
        '**To recover:** Repair the PR by hand, then comment `/yoke land` on #7.',
    );
    expect(fixExhaustedNotice(null, 7, 2).startsWith('@maintainers #7 was rejected')).toBe(true);
  });

  it('GH04 a refused command mentions the commenter exactly once', () => {
    const text = commandReply('rita', refusalText(makeRefusal('command_forbidden', { repo: 'acme/api', permission: 'read' })));
    expect(text).toBe(
      '@rita yoke commands need write access to acme/api; yours is read.\n\n**To recover:** Ask a maintainer with write access to comment the command.',
    );
    expect(text.match(/@rita/g)).toHaveLength(1);
  });

  it('answers the controls in whole sentences', () => {
    expect(startQueued(5)).toBe('Queued a manual AFK run for #5; it launches on the next pass with a free slot.');
    expect(landQueued(7)).toBe('Queued a lander for #7 at its current head; it launches on the next pass with a free slot.');
    expect(autoLoopSet('acme/api', true, true)).toBe('The auto loop of acme/api is on. It stays paused until `/yoke reset`.');
    expect(autoLoopSet('acme/api', false, false)).toBe('The auto loop of acme/api is off.');
    expect(repoReset('acme/api', 3, true)).toBe('Reset acme/api: 3 consecutive failures cleared and the pause lifted.');
    expect(repoReset('acme/api', 1, false)).toBe('Reset acme/api: 1 consecutive failures cleared.');
  });

  it('reports a repository’s status line by line', () => {
    const at = Date.UTC(2026, 10, 30, 10, 0, 0);
    expect(
      repoStatusReport({
        repo: 'acme/api',
        autoLoop: true,
        pausedSince: at,
        failures: 3,
        pauseThreshold: 3,
        cap: 2,
        liveFleetWide: 1,
        autoland: true,
        fixForward: false,
        live: [{ id: 'r1', kind: 'lander', subject: 'pr#7', deadline: at }],
      }),
    ).toBe(
      [
        '**yoke status for acme/api**',
        '- auto loop: on (paused since 2026-11-30T10:00:00.000Z; recover with `/yoke reset`)',
        '- consecutive AFK failures: 3 of 3',
        '- cap: 2; live runs fleet-wide: 1',
        '- autoland: on; fix-forward: off',
        '- live: `r1` lander on pr#7, deadline 2026-11-30T10:00:00.000Z',
      ].join('\n'),
    );
  });

  it('SP18 the verdict comment is the marker line, then the summary people read', () => {
    expect(verdictComment({ run: 'r1', sha: 'abcdef0123', verdict: 'reject' }, 'The test fails.')).toBe(
      '<!-- yoke:verdict v1 {"run":"r1","sha":"abcdef0123","verdict":"reject"} -->\n**yoke lander rejected** this PR at `abcdef0` (run `r1`).\n\nThe test fails.',
    );
  });

  it('has a status, a message and a recovery for every code', () => {
    for (const code of CODES) {
      const info = CODE_INFO[code];
      expect(info.status, code).toBeGreaterThanOrEqual(400);
    }
    expect(makeRefusal('run_unknown', { run: 'r9' })).toEqual({
      code: 'run_unknown',
      status: 404,
      message: 'There is no run r9.',
      recovery: 'Report with the run id yoke gave the run (YOKE_RUN_ID or the run_id input).',
    });
  });
});
