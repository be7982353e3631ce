import { mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';

// The sandbox's programs as single modules, for what starts them as processes many times: yoke's CLI (the
// sandbox's deliveries run `yoke watch deploy`, one process a stage; the tests run it too), yoke itself (the
// second yoke of `--postgres`; the tests of `npm start`) and the demo agent (one process a run). Plain node starts
// the CLI in about 0.8 s of CPU and the agent in 0.1 s, against 2.3 s and 0.4 s through `node --import tsx`, which
// compiles the sources again in every process.

const ROOT = join(import.meta.dirname, '..');

/** Each process bundles to a name of its own and renames it into place: processes building at once never start a half-written file. */
async function bundle(entry: string, out: string, plugins: Plugin[] = []): Promise<void> {
  const tag = `${out}.${process.pid}-${Date.now()}.mjs`;
  await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outfile: tag,
    logLevel: 'warning',
    plugins,
  });
  renameSync(tag, out);
}

/**
 * An entry bundled as `<dir>/main.mjs` and the chunks it imports when it needs them: what a command loads lazily
 * (the database door loads yoke itself) stays out of every other command's start, as it does in dist/. Built in a
 * folder of its own, then moved into place chunks first (each named by its content), so that a process building
 * at once never starts a half-written file.
 */
async function bundleSplit(entry: string, dir: string): Promise<void> {
  const tmp = `${dir}.${process.pid}-${Date.now()}`;
  await build({
    entryPoints: { main: entry },
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outdir: tmp,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunk-[hash]',
    logLevel: 'warning',
  });
  const files = readdirSync(tmp).sort((a, b) => Number(a === 'main.mjs') - Number(b === 'main.mjs'));
  for (const f of files) renameSync(join(tmp, f), join(dir, f));
  rmSync(tmp, { recursive: true, force: true });
}

function writeAtomically(path: string, text: string): void {
  writeFileSync(`${path}.${process.pid}`, text);
  renameSync(`${path}.${process.pid}`, path);
}

/**
 * Bundles src/cli/main.ts into `<root>/<folder>/cli/`, and returns the module that runs it with its arguments. It
 * lies two folders below the root, as src/cli/ does, so the paths the CLI finds relative to its own module
 * (package.json, templates/, app.yml) are the same.
 */
export async function buildCli(folder: string): Promise<string> {
  const dir = join(ROOT, folder, 'cli');
  mkdirSync(dir, { recursive: true });
  await bundleSplit(join(ROOT, 'src', 'cli', 'main.ts'), dir);
  const run = join(dir, 'run.mjs');
  writeAtomically(run, "const { main } = await import('./main.mjs');\nawait main(process.argv.slice(2));\n");
  return run;
}

/**
 * Each bundled module but the entry keeps its own `import.meta.url` and `dirname`: the files it reads beside it
 * are found where they are. The entry's stay the bundle's, so its "am I the program run?" check still holds.
 */
const ownPlace = (entry: string): Plugin => ({
  name: 'own-place',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path === entry) return undefined;
      const url = pathToFileURL(args.path).href;
      const dir = join(args.path, '..');
      const text = readFileSync(args.path, 'utf8')
        .replaceAll('import.meta.url', JSON.stringify(url))
        .replaceAll('import.meta.dirname', JSON.stringify(dir));
      return { contents: text, loader: 'ts' };
    });
  },
});

/** A program bundled into `<root>/<folder>/<name>.mjs`, each module reading its files from where it lies in the tree. */
export async function buildProgram(folder: string, name: string, entry: string): Promise<string> {
  const dir = join(ROOT, folder);
  mkdirSync(dir, { recursive: true });
  const out = join(dir, `${name}.mjs`);
  await bundle(entry, out, [ownPlace(entry)]);
  return out;
}

/** yoke's server (src/main.ts, what `npm start` runs), bundled. */
export const buildServer = (folder: string): Promise<string> =>
  buildProgram(folder, 'yoke', join(ROOT, 'src', 'main.ts'));

let cli: Promise<string> | null = null;
let agent: Promise<string> | null = null;
let server: Promise<string> | null = null;

/** The CLI bundled once for this process, in `<root>/.build/` (what the sandbox's deliveries run). */
export function builtCli(): Promise<string> {
  cli ??= buildCli('.build');
  return cli;
}

/** The demo agent (sandbox/agents/demo-run.ts) bundled once for this process, in `<root>/.build/`. */
export function builtAgent(): Promise<string> {
  agent ??= buildProgram('.build', 'demo-run', join(ROOT, 'sandbox', 'agents', 'demo-run.ts'));
  return agent;
}

/** yoke's server bundled once for this process, in `<root>/.build/` (the second yoke of `--postgres`). */
export function builtServer(): Promise<string> {
  server ??= buildServer('.build');
  return server;
}
