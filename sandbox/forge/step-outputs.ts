import { readFileSync } from 'node:fs';

// A step's GITHUB_OUTPUT file, read as the runner reads it after the step.

/** `name=value` lines (and `name<<DELIM` blocks) of a step's GITHUB_OUTPUT file. */
export function readOutputs(file: string): Record<string, string> {
  const out: Record<string, string> = {};
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return out;
  }
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const heredoc = /^([\w-]+)<<(.+)$/.exec(lines[i]!);
    if (heredoc) {
      const end = lines.indexOf(heredoc[2]!, i + 1);
      out[heredoc[1]!] = lines.slice(i + 1, end < 0 ? undefined : end).join('\n');
      i = end < 0 ? lines.length : end;
      continue;
    }
    const eq = lines[i]!.indexOf('=');
    if (eq > 0) out[lines[i]!.slice(0, eq)] = lines[i]!.slice(eq + 1);
  }
  return out;
}
