import { SettingsError } from './config/settings.js';
import { startYoke } from './server.js';

// `npm start`: Probot's runner. Without APP_ID and a private key Probot serves
// its setup page, which registers the app from app.yml.

startYoke(process.env).catch((err) => {
  console.error(err instanceof SettingsError ? err.message : err instanceof Error ? err.message : err);
  process.exit(1);
});
