import { closeSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';

// TR06: yoke keeps no secret in its environment once it has read it. A
// variable deleted from process.env is still in /proc/<pid>/environ, which
// shows the block the process started with, and any process of the same user
// reads it. So the values are also zeroed where the kernel shows them: the
// process writes its own memory through /proc/self/mem.

/** The variables yoke's server reads its secrets from, and then forgets. */
export const SERVER_SECRET_VARIABLES = [
  'PRIVATE_KEY',
  'WEBHOOK_SECRET',
  'YOKE_API_TOKENS',
  'YOKE_PERSON_TOKENS',
  'YOKE_DATABASE_URL',
  'GITHUB_CLIENT_SECRET',
  'YOKE_METRICS_TOKEN',
  'OTEL_EXPORTER_OTLP_HEADERS',
] as const;

/** Where the environment block the process started with lies in its memory (fields 50 and 51 of /proc/self/stat). */
function environBlock(): { start: number; end: number } | null {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')', which ends it.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = Number(fields[50 - 3]);
    const end = Number(fields[51 - 3]);
    return Number.isSafeInteger(start) && Number.isSafeInteger(end) && end > start ? { start, end } : null;
  } catch {
    return null;
  }
}

/**
 * Forgets these variables: deleted from process.env, and their values zeroed in the block
 * /proc/<pid>/environ shows. Returns the names whose values were zeroed there. Read every value
 * first: afterwards process.env has none of them.
 */
export function forgetEnvironment(names: readonly string[]): string[] {
  const zeroed: string[] = [];
  const block = environBlock();
  if (block) {
    let fd: number | null = null;
    try {
      fd = openSync('/proc/self/mem', 'r+');
      const buf = Buffer.alloc(block.end - block.start);
      readSync(fd, buf, 0, buf.length, block.start);
      let at = 0;
      while (at < buf.length) {
        let end = buf.indexOf(0, at);
        if (end < 0) end = buf.length;
        const entry = buf.toString('latin1', at, end);
        const eq = entry.indexOf('=');
        const name = eq > 0 ? entry.slice(0, eq) : '';
        if (names.includes(name) && end > at + eq + 1) {
          const zero = Buffer.alloc(end - (at + eq + 1));
          writeSync(fd, zero, 0, zero.length, block.start + at + eq + 1);
          zeroed.push(name);
        }
        at = end + 1;
      }
    } catch {
      /* no /proc here, or it refused: what follows still forgets the variables */
    } finally {
      if (fd !== null) closeSync(fd);
    }
  }
  for (const name of names) delete process.env[name];
  return zeroed;
}
