import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { runStep } from '../../sandbox/forge/step-process.js';

/** A job's log as the runner keeps it, with what was written and every error it raised. */
function jobLog() {
  const got = { text: '', errors: [] as string[] };
  const log = new Writable({
    write(chunk: Buffer, _enc, done) {
      got.text += chunk.toString();
      done();
    },
  });
  log.on('error', (e) => got.errors.push(e.message));
  return { log, got };
}

const where = { cwd: process.cwd(), env: { PATH: process.env.PATH } };

describe("the embedded forge's runner runs a step", () => {
  it('and has all it wrote in the job log when the step is over, its last line included', async () => {
    const { log, got } = jobLog();
    const code = await runStep('head -c 300000 /dev/zero | tr "\\0" x; echo; echo last; exit 3', where, log, () => {});
    log.end();
    expect(code).toBe(3);
    expect(got.text.length).toBe(300_000 + '\nlast\n'.length);
    expect(got.text.endsWith('\nlast\n')).toBe(true);
  });

  it('and waits for what a process it left behind writes while it holds the output: all of it is in the log, nothing written after the log ends', async () => {
    const { log, got } = jobLog();
    const code = await runStep('(sleep 0.5; echo late) & echo early', where, log, () => {});
    log.end();
    expect(code).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    expect(got).toEqual({ text: 'early\nlate\n', errors: [] });
  });

  it('and is over a moment after it exits when a process it left behind holds its output longer: its late write is dropped, and nothing throws', async () => {
    const { log, got } = jobLog();
    let pid = 0;
    const code = await runStep('(sleep 2.6; echo late) & echo early; exit 4', where, log, (c) => (pid = c.pid!));
    log.end();
    expect(code).toBe(4);
    await new Promise((r) => setTimeout(r, 1_000));
    expect(got).toEqual({ text: 'early\n', errors: [] });
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  });

  it("in a process group of its own, started by the forge's spawner, not by the forge's process: the group of the pid it gives is what a cancel ends, with 143", async () => {
    const { log, got } = jobLog();
    let pid = 0;
    const step = runStep('echo "parent $PPID"; sleep 30 & wait', where, log, (c) => (pid = c.pid));
    await vi.waitFor(() => expect(got.text).toMatch(/^parent \d+\n$/), { timeout: 5_000 });
    expect(pid).toBeGreaterThan(0);
    expect(Number(/parent (\d+)/.exec(got.text)![1])).not.toBe(process.pid);
    process.kill(-pid, 'SIGTERM');
    expect(await step).toBe(143);
    log.end();
  });
});
