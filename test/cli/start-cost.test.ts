import { join, resolve } from 'node:path';
import { build, type Metafile } from 'esbuild';
import { describe, expect, it } from 'vitest';

// Every CLI command starts by loading what src/cli/main.ts imports, statically, before it parses a word. yoke
// itself (Probot, the app, its store's PostgreSQL driver) is loaded only by the commands that need it, through
// import(): `yoke --version` took 0.63 s of CPU when it loaded them, 0.30 s without.

const ROOT = resolve(import.meta.dirname, '..', '..');

/** Each module an entry loads before its code runs: its static imports, and theirs, package names as written. */
async function loadedAtStart(entry: string): Promise<Map<string, string[]>> {
  const { metafile } = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    write: false,
    metafile: true,
    outdir: join(ROOT, '.unused'),
    logLevel: 'silent',
  });
  const inputs = (metafile as Metafile).inputs;
  const start = Object.keys(inputs).find((k) => resolve(ROOT, k) === entry)!;
  const via = new Map<string, string[]>([[start, [start]]]);
  const queue = [start];
  while (queue.length) {
    const file = queue.shift()!;
    for (const imp of inputs[file]?.imports ?? [])
      if (imp.kind === 'import-statement' && !via.has(imp.path)) {
        via.set(imp.path, [...via.get(file)!, imp.path]);
        queue.push(imp.path);
      }
  }
  return via;
}

const HEAVY = ['probot', 'pg', 'prom-client', '@opentelemetry/exporter-trace-otlp-http', 'src/app.ts', 'src/door.ts'];

describe("the CLI's start", () => {
  it('loads neither yoke itself nor its PostgreSQL driver: the commands that need them import them', async () => {
    const loaded = await loadedAtStart(join(ROOT, 'src', 'cli', 'main.ts'));
    expect(HEAVY.filter((m) => loaded.has(m)).map((m) => loaded.get(m)!.join(' → '))).toEqual([]);
  });

  it('finds them where they are loaded at start (the check itself can fail)', async () => {
    const loaded = await loadedAtStart(join(ROOT, 'src', 'main.ts'));
    expect(HEAVY.filter((m) => loaded.has(m))).toEqual([
      'probot',
      'prom-client',
      '@opentelemetry/exporter-trace-otlp-http',
      'src/app.ts',
    ]);
  });
});
