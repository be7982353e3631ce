import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// TR21: how the agent job hands its result to the deliver job without a
// JavaScript action running after the agent (an artifact upload would get
// the job's runtime token, and with it a way to write Actions caches). The
// runner writes the result and the bundle as job outputs, base64 in chunks
// small enough for one environment variable each; the deliver job reads
// them from its environment. What arrives is untrusted data, checked there.

export const HANDOVER_CHUNKS = 8;
/** Characters of base64 per output: an environment variable holds at most 128 KiB. */
export const CHUNK_CHARS = 100_000;
/** The largest bundle that fits, in bytes. */
export const MAX_HANDOVER_BYTES = Math.floor((HANDOVER_CHUNKS * CHUNK_CHARS * 3) / 4);

/** Writes `result` and `bundle_0`…`bundle_7` to $GITHUB_OUTPUT; an error names the size when the bundle is too large. */
export function writeHandover(outputFile: string, result: string, bundle: Buffer | null): string | null {
  if (bundle && bundle.length > MAX_HANDOVER_BYTES) {
    return `the agent's change is ${Math.ceil(bundle.length / 1024)} KiB as a git bundle, more than the ${Math.floor(MAX_HANDOVER_BYTES / 1024)} KiB a run hands over: split the issue into smaller ones`;
  }
  const b64 = bundle ? bundle.toString('base64') : '';
  const lines = [`result=${Buffer.from(result).toString('base64')}`];
  for (let i = 0; i < HANDOVER_CHUNKS; i++)
    lines.push(`bundle_${i}=${b64.slice(i * CHUNK_CHARS, (i + 1) * CHUNK_CHARS)}`);
  appendFileSync(outputFile, `${lines.join('\n')}\n`);
  return null;
}

const B64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** The deliver job's side: YOKE_HANDOVER_RESULT and YOKE_HANDOVER_BUNDLE_0…7 into files in `out`; false when none was handed over. */
export function readHandover(
  env: Record<string, string | undefined>,
  out: string,
  resultFile: string,
  bundleFile: string,
): boolean {
  const result = env.YOKE_HANDOVER_RESULT;
  if (!result) return false;
  const parts = Array.from({ length: HANDOVER_CHUNKS }, (_, i) => env[`YOKE_HANDOVER_BUNDLE_${i}`] ?? '');
  if (!B64.test(result) || parts.some((p) => !B64.test(p))) return false;
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, resultFile), Buffer.from(result, 'base64'));
  const bundle = parts.join('');
  if (bundle) writeFileSync(join(out, bundleFile), Buffer.from(bundle, 'base64'));
  return true;
}
