import { existsSync, readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseEnv } from 'node:util';
import { forgetEnvironment, SERVER_SECRET_VARIABLES } from './kernel/environ.js';
import { startYoke } from './server.js';
import { errorText } from './kernel/error-text.js';

// `npm start` and `yoke serve`: Probot's runner. Without APP_ID and a private
// key Probot serves its setup page, which registers the app from app.yml.

export interface ServeIo {
  err: (line: string) => void;
  /** Where SIGINT and SIGTERM are heard (the process, or a test's emitter). */
  signals: Pick<NodeJS.Process, 'once'>;
}

/** The line yoke says when it is stopped by a signal (Ctrl-C or the container's stop). */
export function stoppedMessage(signal: string): string {
  return `yoke stopped (${signal}): the store is closed and nothing in it is lost. Runs already launched carry on and report when yoke is back; start it again with \`yoke serve\` (or \`npm start\` in a checkout).`;
}

/**
 * Serves yoke until a signal stops it; resolves to the process's exit code.
 * Settings that cannot work stop it first, with each variable named.
 */
export async function serveYoke(env: NodeJS.ProcessEnv, io: ServeIo): Promise<number> {
  // Probot lays .env over the environment when it starts; do it first, the same
  // way, so yoke's checks see the settings Probot will run with.
  if (existsSync('.env')) Object.assign(env, parseEnv(readFileSync('.env', 'utf8')));
  let started;
  try {
    started = await startYoke(env);
  } catch (err) {
    io.err(errorText(err));
    return 1;
  }
  // TR06: what yoke needed of its secrets it has read; no run, and no process of this user, reads them from /proc now.
  if (env === process.env) forgetEnvironment(SERVER_SECRET_VARIABLES);
  const signal = await new Promise<string>((heard) => {
    io.signals.once('SIGINT', () => heard('SIGINT'));
    io.signals.once('SIGTERM', () => heard('SIGTERM'));
  });
  await started.stop();
  io.err(stoppedMessage(signal));
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  process.exit(await serveYoke(process.env, { err: (l) => console.error(l), signals: process }));
