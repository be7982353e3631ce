import { describe, expect, it } from 'vitest';
import { COMMAND_USAGE, parseComment, suggestCommand } from '../../src/commands/command.js';
import { makeRefusal } from '../../src/kernel/codes/table.js';
import { refusalText } from '../../src/kernel/reply.js';

describe('comment command parsing', () => {
  it('GH04 reads the command words on the first line only', () => {
    expect(parseComment('/yoke start')).toEqual({ kind: 'command', command: { name: 'start' } });
    expect(parseComment('  /yoke auto off\nbecause the release is frozen')).toEqual({
      kind: 'command',
      command: { name: 'auto', on: false },
    });
    expect(parseComment('/yoke land')).toEqual({ kind: 'command', command: { name: 'land' } });
    expect(parseComment('Thanks! /yoke start')).toEqual({ kind: 'none' });
    expect(parseComment('/yokeish start')).toEqual({ kind: 'none' });
  });

  it('TR33 /yoke start and /yoke fix take what follows them, on the first line and below, as the writer’s instructions', () => {
    expect(parseComment('/yoke start')).toEqual({ kind: 'command', command: { name: 'start' } });
    expect(parseComment('  /yoke start use the metric units\nand keep it short ')).toEqual({
      kind: 'command',
      command: { name: 'start', text: 'use the metric units\nand keep it short' },
    });
    expect(parseComment('/yoke fix\nRename `count` to `total`.')).toEqual({
      kind: 'command',
      command: { name: 'fix', text: 'Rename `count` to `total`.' },
    });
    expect(parseComment('/yoke fix')).toEqual({ kind: 'command', command: { name: 'fix', text: '' } });
    expect(parseComment('/yoke fixes please')).toEqual({ kind: 'unknown', text: '/yoke fixes please' });
  });

  it('GH04 unknown words and extra arguments are unknown, quoted back', () => {
    expect(parseComment('/yoke auto maybe')).toEqual({ kind: 'unknown', text: '/yoke auto maybe' });
    expect(parseComment('/yoke land now please')).toEqual({ kind: 'unknown', text: '/yoke land now please' });
    expect(parseComment('/yoke')).toEqual({ kind: 'unknown', text: '/yoke' });
  });

  it('GH04 an unknown command near one that exists says which: a word that starts one command, else a typo within reach', () => {
    expect(suggestCommand('/yoke stat')).toBe('/yoke status');
    expect(suggestCommand('/yoke strat')).toBe('/yoke start');
    expect(suggestCommand('/yoke lnad')).toBe('/yoke land');
    expect(suggestCommand('/yoke qa decl')).toBe('/yoke qa decline');
    expect(suggestCommand('/yoke qa atach x')).toBe('/yoke qa attach <plan>');
    expect(suggestCommand('/yoke deploy everything')).toBeNull();
    expect(suggestCommand('/yoke auto maybe')).toBeNull();
    expect(suggestCommand('/yoke')).toBeNull();
    expect(
      refusalText(makeRefusal('command_unknown', { command: '/yoke stat', suggestion: suggestCommand('/yoke stat') })),
    ).toBe(
      '`/yoke stat` is not a yoke command. Did you mean `/yoke status`?\n\n**To recover:** Use one of: /yoke start, /yoke start <instructions>, /yoke fix <what to change>, /yoke land, /yoke auto on, /yoke auto off, /yoke reset, /yoke status, /yoke qa attach <plan>, /yoke qa decline, /yoke qa waive <case> [--plan PLAN] --reason "why".',
    );
  });

  it('GH04 the reply to an unknown command lists every command there is, /yoke qa decline included', () => {
    const recovery = makeRefusal('command_unknown', { command: '/yoke x', suggestion: null }).recovery;
    expect(COMMAND_USAGE.filter((c) => !recovery.includes(c))).toEqual([]);
  });

  it('GH04 every usage line, typed as shown, is read as its own command: the table that lists them also parses them', () => {
    const typed = COMMAND_USAGE.map((u) =>
      u
        .replace('<instructions>', 'use metric units')
        .replace('<what to change>', 'rename it')
        .replace('<plan>', 'smoke')
        .replace('<case>', 'cart')
        .replace(' [--plan PLAN]', ''),
    );
    expect(typed.map((t) => parseComment(t).kind)).toEqual(COMMAND_USAGE.map(() => 'command'));
    expect(typed.map((t) => (parseComment(t) as { command: { name: string } }).command.name)).toEqual([
      'start',
      'start',
      'fix',
      'land',
      'auto',
      'auto',
      'reset',
      'status',
      'qa_attach',
      'qa_decline',
      'qa_waive',
    ]);
  });
});
