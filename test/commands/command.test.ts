import { describe, expect, it } from 'vitest';
import { parseComment } from '../../src/commands/command.js';

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

  it('GH04 unknown words and extra arguments are unknown, quoted back', () => {
    expect(parseComment('/yoke auto maybe')).toEqual({ kind: 'unknown', text: '/yoke auto maybe' });
    expect(parseComment('/yoke start now please')).toEqual({ kind: 'unknown', text: '/yoke start now please' });
    expect(parseComment('/yoke')).toEqual({ kind: 'unknown', text: '/yoke' });
  });
});
