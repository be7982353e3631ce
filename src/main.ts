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
  signals: { once(event: 'SIGINT' | 'SIGTERM', listener: () => void): unknown };
  /** How yoke is started (startYoke; a test's stand-in). */
  start?: typeof startYoke;
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
  let lapsed = (): void => {};
  const stopBy = new Promise<string>((heard) => {
    io.signals.once('SIGINT', () => heard('SIGINT'));
    io.signals.once('SIGTERM', () => heard('SIGTERM'));
    lapsed = () => heard(LEASE_LAPSED);
  });
  try {
    started = await (io.start ?? startYoke)(env, { onLeaseLapsed: () => lapsed() });
  } catch (err) {
    io.err(errorText(err));
    return 1;
  }
  // TR06: what yoke needed of its secrets it has read; no run, and no process of this user, reads them from /proc now.
  if (env === process.env) forgetEnvironment(SERVER_SECRET_VARIABLES);
  const by = await stopBy;
  await started.stop();
  // A lapsed lease (TR12) is a stop to start again from: what this process held is another's now, so it ends with
  // EX_TEMPFAIL for its service manager (Restart=on-failure, restart: unless-stopped) to start it afresh.
  if (by === LEASE_LAPSED) {
    io.err(leaseLapsedStopMessage());
    return EX_TEMPFAIL;
  }
  io.err(stoppedMessage(by));
  return 0;
}

const LEASE_LAPSED = 'lease lapsed';
/** sysexits.h: a temporary failure, to try again. */
export const EX_TEMPFAIL = 75;

/** The line yoke says when it stops because its process lease lapsed. */
export function leaseLapsedStopMessage(): string {
  return `yoke stopped: this process's lease in the store lapsed (it stalled past its lease, or another process found it gone), and what it held has been taken over. Nothing is lost; a service manager starts it again (exit code ${EX_TEMPFAIL}), or start it yourself with \`yoke serve\`.`;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  process.exit(await serveYoke(process.env, { err: (l) => console.error(l), signals: process }));
