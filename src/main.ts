import { run } from 'probot';
import { createYokeApp, resolveSettings, SettingsError, yokeOctokit } from './app.js';
import type { CacheStats } from './forge/conditional-cache.js';
import { systemClock } from './log.js';
import { openStore } from './store/store.js';

// `npm start`: Probot's runner. Without APP_ID and a private key Probot serves
// its setup page, which registers the app from app.yml.

async function main(): Promise<void> {
  let settings;
  try {
    settings = resolveSettings({});
  } catch (err) {
    if (err instanceof SettingsError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
  const store = openStore(settings.dbPath);
  const cacheStats: CacheStats = { requests: 0, notModified: 0 };
  const { appFn } = createYokeApp({ settings, store, cacheStats });
  await run(appFn, { Octokit: yokeOctokit(store, systemClock, cacheStats) } as Parameters<typeof run>[1]);
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
