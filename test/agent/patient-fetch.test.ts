import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../sandbox/yoke-process.js';
import { PATIENCE_MS, patientFetch } from '../../src/agent/patient-fetch.js';

// SP17: a run's calls to yoke outlast yoke's restart: a call nothing listened for is sent again, for up to a minute,
// on a real loopback port that refuses and then listens; an answer, even a refusal of yoke's, is never sent twice.

let server: Server | null = null;
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

describe('SP17 a run calling a yoke that restarts', () => {
  it('SP17 sends a call nothing listened for again once yoke listens, and takes the answer', async () => {
    const port = await freePort();
    let served = 0;
    const waits: number[] = [];
    // yoke comes back after the run's third try.
    const sleep = async (ms: number) => {
      waits.push(ms);
      if (waits.length === 3)
        await new Promise<void>((r) => {
          server = createServer((_, res) => (served++, res.end('{"ok":true}'))).listen(port, '127.0.0.1', r);
        });
    };
    const res = await patientFetch(fetch, sleep)(`http://127.0.0.1:${port}/yoke/api/runs/r1/push`, { method: 'POST' });
    expect([res.status, await res.text(), served, waits]).toEqual([200, '{"ok":true}', 1, [1000, 2000, 4000]]);
  });

  it('SP17 gives up after a minute with what fetch said, and never sends an answered call twice', async () => {
    const port = await freePort();
    const waits: number[] = [];
    const gaveUp = await patientFetch(
      fetch,
      async (ms) => void waits.push(ms),
    )(`http://127.0.0.1:${port}/`).catch((err: unknown) => err);
    expect(gaveUp).toBeInstanceOf(TypeError);
    expect(waits.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(PATIENCE_MS);
    expect(waits).toEqual([1000, 2000, 4000, 8000, 8000, 8000, 8000, 8000, 8000]);
    // yoke answered (a refusal of its own): that is the caller's, at once.
    let served = 0;
    await new Promise<void>((r) => {
      server = createServer((_, res) => {
        served++;
        res.writeHead(503).end('busy');
      }).listen(0, '127.0.0.1', r);
    });
    const { port: up } = server!.address() as AddressInfo;
    const res = await patientFetch(fetch, async () => void waits.push(-1))(`http://127.0.0.1:${up}/`);
    expect([res.status, served, waits.includes(-1)]).toEqual([503, 1, false]);
  });
});
