// The forge's spawner (sandbox/spawner.ts): a small process that starts programs for a large one, so that the fork
// of each copies this process, not the forge's. Plain JavaScript, started with no loader: it starts in 0.1 s.
import { spawn } from 'node:child_process';

process.on('disconnect', () => process.exit(0));
process.on('message', (m) => {
  const child = spawn(m.file, m.args, { env: m.env, cwd: m.cwd });
  const out = [];
  let answered = false;
  const answer = (code) => {
    if (answered) return;
    answered = true;
    process.send({ id: m.id, code, stdout: Buffer.concat(out) });
  };
  child.stdout.on('data', (c) => out.push(c));
  child.stderr.resume();
  child.once('error', () => answer(null));
  child.once('close', (code) => answer(code));
  // A program that refused its input early has stopped reading: its answer says why, not a broken pipe.
  child.stdin.on('error', () => undefined);
  child.stdin.end(m.input ? Buffer.from(m.input) : undefined);
});
