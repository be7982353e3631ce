import { describe, expect, it } from 'vitest';
import { runBuffered } from '../../sandbox/spawner.js';

// The forge's programs start from a small process of its own (sandbox/spawner.ts), not from the forge's process.

const sh = (script: string, input?: string) =>
  runBuffered({
    file: 'sh',
    args: ['-c', script],
    env: { PATH: process.env.PATH },
    ...(input === undefined ? {} : { input: Buffer.from(input) }),
  });

describe('the spawner', () => {
  it('runs a program from a process other than this one: its exit code, all it wrote, and the input it was given', async () => {
    const ran = await sh('cat; echo "parent $PPID"; exit 3', 'asked\n');
    expect(ran.code).toBe(3);
    const [echoed, parent] = ran.stdout.toString('utf8').split('\n');
    expect(echoed).toBe('asked');
    expect(parent).toMatch(/^parent \d+$/);
    expect(Number(parent!.split(' ')[1])).not.toBe(process.pid);
  });

  it('answers many requests at once, each with its own output', async () => {
    const answers = await Promise.all([1, 2, 3, 4, 5].map((n) => sh(`sleep 0.0${6 - n}; echo ${n}`)));
    expect(answers.map((a) => [a.code, a.stdout.toString('utf8')])).toEqual([1, 2, 3, 4, 5].map((n) => [0, `${n}\n`]));
  });

  it('a program that cannot start, or a spawner that died, answers as a program that did not run; the next request starts a new spawner', async () => {
    expect(await runBuffered({ file: '/nonexistent/program', args: [], env: {} })).toEqual({
      code: null,
      stdout: Buffer.alloc(0),
    });
    const spawnerPid = Number((await sh('echo $PPID')).stdout.toString('utf8'));
    const pending = sh('sleep 5; echo late');
    await new Promise((r) => setTimeout(r, 200));
    process.kill(spawnerPid, 'SIGKILL');
    expect(await pending).toEqual({ code: null, stdout: Buffer.alloc(0) });
    const again = await sh('echo $PPID');
    expect(again.code).toBe(0);
    expect(Number(again.stdout.toString('utf8'))).not.toBe(spawnerPid);
  });
});
