import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseOperatorEnv } from '../src/config/env.js';
import { webhookSecretProblem } from '../src/config/hosting-checks.js';
import { SettingsError } from '../src/config/settings.js';
import { startYoke } from '../src/server.js';

// TR08: yoke refuses to start with a weak webhook secret or operator token, naming the fix.

const privateKey = () =>
  generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();

describe('start', () => {
  it('TR08 refuses a missing webhook secret once the app has credentials, naming the fix', async () => {
    const env = {
      APP_ID: '1',
      PRIVATE_KEY: privateKey(),
      YOKE_DB_PATH: ':memory:',
      YOKE_API_TOKENS: 'a'.repeat(40),
      YOKE_PUBLIC_URL: 'https://yoke.example.com',
    };
    const err = await startYoke(env).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SettingsError);
    expect((err as SettingsError).problems).toEqual([
      "WEBHOOK_SECRET: is not set; it must be at least 32 characters. Make one with `openssl rand -hex 32` and set it both here and as the webhook secret in the GitHub App's settings.",
    ]);
  });

  it('TR08 refuses a short webhook secret, and accepts none only in setup mode (no app credentials yet)', () => {
    expect(webhookSecretProblem({ APP_ID: '1', PRIVATE_KEY: 'k', WEBHOOK_SECRET: 'development' })).toContain(
      'is 11 characters; it must be at least 32',
    );
    expect(
      webhookSecretProblem({ APP_ID: '1', PRIVATE_KEY_PATH: 'key.pem', WEBHOOK_SECRET: 'x'.repeat(32) }),
    ).toBeNull();
    expect(webhookSecretProblem({})).toBeNull();
  });

  it('TR08 refuses operator tokens under 32 characters', () => {
    const parsed = parseOperatorEnv({ YOKE_API_TOKENS: `${'a'.repeat(40)},short` });
    expect(parsed).toEqual({
      ok: false,
      problems: [
        'YOKE_API_TOKENS: every operator token must be at least 32 characters; make one with `openssl rand -hex 32`',
      ],
    });
    expect(parseOperatorEnv({ YOKE_API_TOKENS: 'a'.repeat(32) }).ok).toBe(true);
  });
});
