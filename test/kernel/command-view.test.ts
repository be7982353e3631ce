import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { commandFolders, commandView } from '../../src/kernel/bubblewrap.js';

// TR06: what an operator's command shows again of the folders its view empties: its own project, and never a
// folder the view empties whole (a command naming /tmp would bring back every socket in it).

const project = mkdtempSync(join(tmpdir(), 'yoke-view-'));
afterAll(() => rmSync(project, { recursive: true, force: true }));

describe("a command view's own folders", () => {
  it('TR06 the project of a file the command names comes back read-only; /tmp, /var/tmp, /run and a home named whole do not', () => {
    writeFileSync(join(project, 'package.json'), '{}');
    mkdirSync(join(project, 'bin'), { recursive: true });
    writeFileSync(join(project, 'bin', 'run.sh'), 'true\n');
    const command = `TMPDIR=/tmp HOME=/root sh ${project}/bin/run.sh /var/tmp /run`;
    const own = commandFolders(command);
    expect(own).toEqual(expect.arrayContaining([project, '/tmp', '/var/tmp', '/run']));
    const view = commandView({
      cwd: join(project, 'bin'),
      own,
      hide: [],
      hideFiles: [],
      writable: [],
      homes: ['/root'],
      path: undefined,
    });
    expect(view.ro).toContain(project);
    for (const emptied of ['/tmp', '/var/tmp', '/run', '/root']) expect(view.ro).not.toContain(emptied);
  });
});
