import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { SettingsError } from './config/settings.js';
import { startYoke } from './server.js';

// `npm start`: Probot's runner. Without APP_ID and a private key Probot serves
// its setup page, which registers the app from app.yml.

// Probot lays .env over the environment when it starts; do it first, the same
// way, so yoke's checks see the settings Probot will run with.
if (existsSync('.env')) Object.assign(process.env, parseEnv(readFileSync('.env', 'utf8')));

startYoke(process.env).catch((err) => {
  console.error(err instanceof SettingsError ? err.message : err instanceof Error ? err.message : err);
  process.exit(1);
});
