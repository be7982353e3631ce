import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { errorStack } from '../../src/kernel/error-text.js';
import { createLogger, scrubSecrets } from '../../src/kernel/log.js';

// TR07: what yoke's logger writes carries no token, whatever the caller logs.

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, destination };
}

describe('the logger', () => {
  it('TR07 redacts authorization headers, cookies and signatures, and scrubs tokens from URLs and messages', async () => {
    const { lines, destination } = capture();
    const log = await createLogger({ destination });
    const secret = 'ghs_0123456789abcdefghijklmnopqrstuv';
    // What pino-http logs for each request Probot serves, through a child logger as Probot's server makes one.
    log.child({ name: 'http' }).info(
      {
        req: {
          method: 'GET',
          url: `/yoke?token=${secret}&x=1`,
          headers: {
            authorization: `Bearer ${secret}`,
            cookie: `yoke_session=${secret}`,
            'x-hub-signature-256': `sha256=${secret}`,
            host: 'yoke',
          },
        },
      },
      `GET /yoke?token=${secret} 200 - 3ms`,
    );
    log.warn({ err: `HttpError: token ${secret} was refused` }, 'repo read failed');
    const out = lines.join('');
    expect(out).not.toContain(secret);
    const first = JSON.parse(lines[0]!);
    expect(first.req.headers).toEqual({
      authorization: '[redacted]',
      cookie: '[redacted]',
      'x-hub-signature-256': '[redacted]',
      host: 'yoke',
    });
    expect(first.req.url).toBe('/yoke?token=[redacted]&x=1');
    expect(first.msg).toBe('GET /yoke?token=[redacted] 200 - 3ms');
    expect(JSON.parse(lines[1]!).err).toBe('HttpError: token [redacted] was refused');
  });

  it('TR07 a logged failure keeps its stack, where it happened, and no token it carried', async () => {
    const { lines, destination } = capture();
    const log = await createLogger({ destination });
    const secret = 'ghs_0123456789abcdefghijklmnopqrstuv';
    const err = new Error(`GET https://api.github.com/x?access_token=${secret} failed`);
    log.error({ err: errorStack(err) }, 'reaper pass failed');
    const logged = JSON.parse(lines[0]!).err as string;
    expect(logged.split('\n')[0]).toBe('Error: GET https://api.github.com/x?access_token=[redacted] failed');
    expect(logged).toContain('log.test.ts');
    expect(lines.join('')).not.toContain(secret);
    expect(errorStack('a string')).toBe('a string');
  });

  it('leaves ordinary text alone', () => {
    expect(scrubSecrets('GET /yoke/api/fleet 200 - 2ms')).toBe('GET /yoke/api/fleet 200 - 2ms');
    expect(scrubSecrets('reaped run r1 (token bucket full)')).toBe('reaped run r1 (token bucket full)');
  });
});
