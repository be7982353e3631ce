// The forge's spawner (sandbox/spawner.ts): a small process that starts programs for a large one, so that the fork
// of each copies this process, not the forge's. Plain JavaScript, started with no loader: it starts in 0.1 s.
import { spawn } from 'node:child_process';

/** How long a step that exited may still write to its log, through pipes a process it left behind may hold. */
const STEP_PIPES_MS = 2_000;

/** A program run to its end, its stdout answered whole. */
function buffered(m) {
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
}

/**
 * A workflow step: bash in a process group of its own, its pid told first, its output sent on as it comes, then its
 * exit code (143 when a signal ended it, 127 when bash could not start) once its pipes closed, or a moment after it
 * exited when a process it left behind holds them (what that writes later is dropped).
 */
function step(m) {
  const { id, script, cwd, env } = m.step;
  let child;
  try {
    child = spawn('bash', ['-e', '-c', script], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch {
    return process.send({ id, code: 127 });
  }
  let over = false;
  const end = (code) => {
    if (over) return;
    over = true;
    process.send({ id, code });
  };
  process.send({ id, pid: child.pid });
  const forward = (chunk) => {
    if (!over) process.send({ id, chunk });
  };
  child.stdout.on('data', forward);
  child.stderr.on('data', forward);
  child.once('error', () => end(127));
  child.once('exit', (c, signal) => {
    const code = signal ? 143 : (c ?? 1);
    const left = setTimeout(() => {
      for (const s of [child.stdout, child.stderr]) s.destroy();
      end(code);
    }, STEP_PIPES_MS);
    child.once('close', () => {
      clearTimeout(left);
      end(code);
    });
  });
}

process.on('disconnect', () => process.exit(0));
process.on('message', (m) => (m.step ? step(m) : buffered(m)));
