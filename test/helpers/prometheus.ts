import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A real Prometheus for the tests that need one: Debian's `prometheus` package (with `promtool`), started in
// a temporary folder on a free port. Absent, those tests skip with a message; .ci/run installs it and sets
// YOKE_REQUIRE_PROMETHEUS, so CI never skips them.

const found = (bin: string) => spawnSync(bin, ['--version'], { encoding: 'utf8' }).status === 0;
export const havePrometheus = found('prometheus') && found('promtool');
if (!havePrometheus) {
  if (process.env.YOKE_REQUIRE_PROMETHEUS)
    throw new Error('Prometheus is not installed: `apt-get install -y prometheus` (it brings promtool).');
  console.warn(
    'The Prometheus tests are skipped: Prometheus is not installed. Install it with `apt-get install -y prometheus`.',
  );
}

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const address = s.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      s.close(() => resolve(port));
    });
  });

export interface LocalPrometheus {
  url: string;
  /** An instant query through Prometheus's HTTP API: each series' labels and value. */
  query(expr: string): Promise<{ metric: Record<string, string>; value: number }[]>;
  stop(): Promise<void>;
}

/** Prometheus scraping one target every second, with the scrape settings given (metrics_path, authorization, …). */
export async function startPrometheus(job: Record<string, unknown>): Promise<LocalPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'yoke-prometheus-'));
  const port = await freePort();
  writeFileSync(
    join(dir, 'prometheus.yml'),
    JSON.stringify({ global: { scrape_interval: '1s', evaluation_interval: '1s' }, scrape_configs: [job] }),
  );
  const child: ChildProcess = spawn(
    'prometheus',
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    { stdio: 'ignore' },
  );
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (i > 150) throw new Error('Prometheus did not become ready in 15 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    async query(expr) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(expr)}`);
      const body = (await res.json()) as {
        status: string;
        data: { result: { metric: Record<string, string>; value: [number, string] }[] };
      };
      if (body.status !== 'success') throw new Error(`Prometheus refused ${expr}: ${JSON.stringify(body)}`);
      return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
    },
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
