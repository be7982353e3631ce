import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { optInJsonSchema, planJsonSchema } from '../../src/config/schema.js';
import { OperatorEnv, SETTINGS, settingsTable } from '../../src/config/settings-table.js';
import { METRICS, metricsTable } from '../../src/http/operator/metrics.js';

// Facts declared once, and what is derived from them kept equal: the
// settings table of docs/hosting.md is what src/config/settings-table.ts
// renders, and every key of the opt-in file and of a QA plan explains itself
// in `yoke config schema`.

const ROOT = resolve(import.meta.dirname, '../..');

/** The block of a page between `<!-- settings… -->` and `<!-- /settings -->`. */
function settingsBlock(page: string): string | null {
  const m = /<!-- settings[^\n]*-->\n([\s\S]*?)<!-- \/settings -->/.exec(page);
  return m ? m[1]! : null;
}

type Json = { [key: string]: unknown };

/** The keys of a JSON schema (at any depth) that carry no description. */
function undescribed(schema: unknown, path: string): string[] {
  if (!schema || typeof schema !== 'object') return [];
  const s = schema as Json;
  const out: string[] = [];
  for (const [key, sub] of Object.entries((s.properties ?? {}) as Json)) {
    if (!(sub as Json).description) out.push(`${path}.${key}`);
    out.push(...undescribed(sub, `${path}.${key}`));
  }
  for (const key of ['items', 'additionalProperties']) out.push(...undescribed(s[key], `${path}[]`));
  for (const key of ['anyOf', 'oneOf', 'allOf'])
    if (Array.isArray(s[key])) for (const sub of s[key]) out.push(...undescribed(sub, path));
  return out;
}

describe('each fact declared once', () => {
  it("docs/hosting.md's settings table is the one the settings declare (`yoke config settings`)", () => {
    const doc = readFileSync(resolve(ROOT, 'docs/hosting.md'), 'utf8');
    expect(settingsBlock(doc)).toBe(settingsTable());
  });

  it('the table check fails on a doc that drifted (a default changed by hand)', () => {
    const doc = readFileSync(resolve(ROOT, 'docs/hosting.md'), 'utf8').replace(
      '| `YOKE_GLOBAL_CAP` | 2 |',
      '| `YOKE_GLOBAL_CAP` | 3 |',
    );
    expect(settingsBlock(doc)).not.toBe(settingsTable());
  });

  it("docs/hosting.md's metrics table is the one METRICS declares, and drifts are caught", () => {
    const doc = readFileSync(resolve(ROOT, 'docs/hosting.md'), 'utf8');
    const block = (page: string) => /<!-- metrics[^\n]*-->\n([\s\S]*?)<!-- \/metrics -->/.exec(page)?.[1] ?? null;
    expect(block(doc)).toBe(metricsTable());
    expect(Object.keys(METRICS).every((name) => doc.includes(`\`${name}\``))).toBe(true);
    expect(block(doc.replace('| `yoke_cap` | gauge |', '| `yoke_cap` | counter |'))).not.toBe(metricsTable());
  });

  it('every setting is in the environment schema, and its declared default parses', () => {
    expect(Object.keys(OperatorEnv.shape)).toEqual(Object.keys(SETTINGS));
    for (const [name, s] of Object.entries(SETTINGS) as [string, { schema: z.ZodType; default?: string }][])
      if (s.default !== undefined) expect(s.schema.safeParse(s.default).success, name).toBe(true);
  });

  it('every key of the opt-in file and of a QA plan has a description in `yoke config schema`', () => {
    expect(undescribed(optInJsonSchema(), 'yoke')).toEqual([]);
    expect(undescribed(planJsonSchema(), 'plan')).toEqual([]);
  });

  it('the description check finds a key without one, at any depth (the check itself can fail)', () => {
    const schema = z.object({
      a: z.string().describe('said'),
      b: z.object({ c: z.array(z.object({ d: z.number() })) }),
    });
    expect(undescribed(z.toJSONSchema(schema), 'x')).toEqual(['x.b', 'x.b.c', 'x.b.c[].d']);
  });
});
