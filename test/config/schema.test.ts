import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_PATH } from '../../src/config/repo-config.js';
import { optInJsonSchema, planJsonSchema, SCHEMA_MODELINE, SCHEMA_PATH } from '../../src/config/schema.js';
import { runCli } from '../../src/cli/main.js';
import { optInFile } from '../../src/cli/init.js';

// The JSON schemas editors read come from the zod schemas yoke parses with.

async function yoke(args: string[]): Promise<{ code: number; out: string }> {
  const out: string[] = [];
  const code = await runCli(args, { out: (l) => out.push(l), err: (l) => out.push(l), env: {}, fetch });
  return { code, out: out.join('\n') };
}

describe("the opt-in file's JSON schema", () => {
  it('names every key yoke reads, delivery as the delivery half reads it, and refuses keys it does not know', () => {
    const s = optInJsonSchema() as {
      title: string;
      additionalProperties: boolean;
      properties: Record<string, { properties?: Record<string, unknown>; additionalProperties?: boolean }>;
    };
    expect(s.title).toBe("yoke's opt-in file (.github/yoke.yml)");
    expect(s.additionalProperties).toBe(false);
    expect(Object.keys(s.properties)).toEqual(
      expect.arrayContaining(['afk_label', 'auto', 'autoland', 'fix_forward', 'agent', 'protected_paths', 'delivery']),
    );
    expect(Object.keys(s.properties.delivery!.properties!)).toEqual(expect.arrayContaining(['stages', 'plans_dir']));
    expect(s.properties.autoland!.additionalProperties).toBe(false);
  });

  it("yoke config schema prints it, and --plan the QA plan's; yoke init names it on the first line of the file it writes", async () => {
    expect(await yoke(['config', 'schema'])).toEqual({ code: 0, out: JSON.stringify(optInJsonSchema(), null, 2) });
    const plan = await yoke(['config', 'schema', '--plan']);
    expect(plan).toEqual({ code: 0, out: JSON.stringify(planJsonSchema(), null, 2) });
    expect(Object.keys((planJsonSchema() as { properties: object }).properties)).toEqual(
      expect.arrayContaining(['name', 'cases']),
    );
    expect(optInFile('claude-code').split('\n')[0]).toBe(SCHEMA_MODELINE);
    // The modeline's path is relative to the opt-in file, and lands on the file yoke init writes.
    expect(join(dirname(CONFIG_PATH), /\$schema=(\S+)/.exec(SCHEMA_MODELINE)![1]!)).toBe(SCHEMA_PATH);
  });
});
