import { describe, expect, it } from 'vitest';
import { openDatabaseDoor } from '../src/door.js';

// TR30: the database door reads the app's key from its file and keeps it in
// no environment, so no command its driver runs can read it from /proc.

describe('the database door', () => {
  it('TR30 refuses the app key in its environment, and names the file setting', async () => {
    await expect(
      openDatabaseDoor({ APP_ID: '1', PRIVATE_KEY: '-----BEGIN RSA PRIVATE KEY-----' }, ':memory:'),
    ).rejects.toThrow(
      "The database door reads the app's key from its file, never from the environment, where the commands it runs could read it: unset PRIVATE_KEY and set PRIVATE_KEY_PATH to the .pem file.",
    );
    await expect(openDatabaseDoor({ APP_ID: '1' }, ':memory:')).rejects.toThrow(
      "The database door needs the app's credentials: set APP_ID, and PRIVATE_KEY_PATH to the app's .pem file, as the server has them.",
    );
    await expect(
      openDatabaseDoor({ APP_ID: '1', PRIVATE_KEY_PATH: '/nonexistent/key.pem' }, ':memory:'),
    ).rejects.toThrow(
      "The database door could not read PRIVATE_KEY_PATH (/nonexistent/key.pem): point it at the app's .pem file.",
    );
  });
});
