import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/store.js';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'yoke-xproc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the locked launch across processes', () => {
  it('SP08 three processes racing launches on one database file never pass the cap: the store transaction is the backstop', async () => {
    const db = join(dir, 'shared.db');
    await openStore(db).close(); // migrations applied once, as at start
    const worker = (name: string) =>
      run(process.execPath, [
        '--import',
        import.meta.resolve('tsx'),
        join(import.meta.dirname, 'launch-worker.ts'),
        db,
        name,
        '2000',
        '40',
      ]);
    const outs = (await Promise.all([worker('a'), worker('b'), worker('c')])).map(
      (o) => JSON.parse(o.stdout) as { launched: number; maxSeen: number },
    );
    // Each worker ends a run every third attempt, so the fleet crosses the cap again and again: at least
    // ten times the cap is launched even when the OS runs the workers one after another (about 700 then).
    expect(outs.reduce((sum, o) => sum + o.launched, 0)).toBeGreaterThan(400);
    expect(Math.max(...outs.map((o) => o.maxSeen))).toBe(40);
    const store = openStore(db);
    expect(await store.runs.countLive()).toBeLessThanOrEqual(40);
    expect(Math.max(...(await store.runs.listAll(10_000)).map((r) => r.liveAtLaunch))).toBe(40);
    await store.close();
  }, 60_000);
});
