import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { described } from './described.js';
import { refuseRepeats } from './repeats.js';
import { closest, issueLines, shownIssues } from './suggest.js';
import { fieldOf } from './delivery.js';

// A QA plan file in the plans folder. Its exact id is its path in that folder
// without the extension; its name may be shared by several files.

const CaseId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, 'a case id is 1-64 lower-case letters, digits, ., - or _');

export const QaCase = z
  .object(
    described(
      {
        id: CaseId,
        title: z.string().min(1).max(200),
        run: z.string().min(1).optional(),
        manual: z.literal(true).optional(),
        evidence: z.enum(['required', 'optional']).optional(),
        review: z.enum(['independent', 'none']).default('none'),
        replaces: CaseId.optional(),
      },
      {
        id: "the case's id in its plan, 1-64 lower-case letters, digits, ., - or _",
        title: 'what the case checks, as people read it',
        run: 'the command that checks it (or `manual: true`)',
        manual: 'a person checks it (or `run:`)',
        evidence: 'whether a result must carry evidence (default: required for manual cases)',
        review:
          'independent: the item also waits for an approving review of its claim PR, at the head yoke merged, by a writer who is not its author, holder or assignee',
        // TR10, QA06
        replaces: 'the case of this plan this one corrects; only a declared one takes over its obligation',
      },
    ),
  )
  .strict()
  .refine((c) => (c.run === undefined) !== (c.manual === undefined), {
    message: 'a case has either `run:` (a command) or `manual: true`, not both and not neither',
  })
  // A manual case is only as good as what it shows, so it needs evidence unless the plan says otherwise.
  .transform((c) => ({ ...c, evidence: c.evidence ?? (c.manual ? 'required' : 'optional') }));
export type QaCase = z.infer<typeof QaCase>;

export const QaPlanFile = z
  .object(
    described(
      { name: z.string().min(1).max(100), cases: z.array(QaCase).min(1, 'a plan lists at least one case') },
      { name: "the plan's name, as stages and run_plans name it", cases: 'what the plan checks, one case each' },
    ),
  )
  .strict()
  .superRefine((p, ctx) => {
    refuseRepeats(ctx, p.cases, { list: 'cases', field: 'id', what: 'case id' }, (c) => c.id);
    p.cases.forEach((c, i) => {
      if (c.replaces !== undefined && (c.replaces === c.id || !p.cases.some((o) => o.id === c.replaces))) {
        ctx.addIssue({
          code: 'custom',
          path: ['cases', i, 'replaces'],
          message: `case ${c.id} replaces ${c.replaces}, which is not another case of this plan`,
        });
      }
    });
  });
export type QaPlanFile = z.infer<typeof QaPlanFile>;

export interface QaPlan extends QaPlanFile {
  /** Exact id: the path in the plans folder without its extension. */
  id: string;
  path: string;
}

export type PlanFileResult = { ok: true; plan: QaPlan } | { ok: false; path: string; field: string; detail: string };

export const PLAN_EXTENSION = /\.ya?ml$/;

/** The exact id of a file in the plans folder, or null when it is not a plan file. */
export function planIdOf(plansDir: string, path: string): string | null {
  if (!path.startsWith(plansDir) || !PLAN_EXTENSION.test(path)) return null;
  return path.slice(plansDir.length).replace(PLAN_EXTENSION, '');
}

export function parsePlanFile(plansDir: string, path: string, text: string): PlanFileResult {
  const id = planIdOf(plansDir, path);
  if (id === null) return { ok: false, path, field: path, detail: `${path} is not a .yml file in ${plansDir}` };
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    return {
      ok: false,
      path,
      field: path,
      detail: `${path} is not YAML: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
    };
  }
  const parsed = QaPlanFile.safeParse(raw);
  if (!parsed.success) {
    const first = shownIssues(QaPlanFile, parsed.error.issues, raw)[0]!;
    return {
      ok: false,
      path,
      field: fieldOf(path, first.path),
      detail: issueLines(QaPlanFile, parsed.error.issues, raw, (p) => fieldOf(path, p)).join('; '),
    };
  }
  return { ok: true, plan: { ...parsed.data, id, path } };
}

export type PlanResolution =
  | { ok: true; id: string }
  | { ok: false; reason: 'ambiguous'; ids: string[] }
  | { ok: false; reason: 'unknown'; known: string[] };

/**
 * QA19: a reference names a plan by its exact id, or by a name exactly one
 * plan has. A name several plans share is refused with their ids.
 */
export function resolvePlanRef(ref: string, plans: readonly { id: string; name: string }[]): PlanResolution {
  if (plans.some((p) => p.id === ref)) return { ok: true, id: ref };
  const named = plans
    .filter((p) => p.name === ref)
    .map((p) => p.id)
    .sort();
  if (named.length === 1) return { ok: true, id: named[0]! };
  if (named.length > 1) return { ok: false, reason: 'ambiguous', ids: named };
  return { ok: false, reason: 'unknown', known: plans.map((p) => p.id).sort() };
}

export type RunPlansResult = { ok: true; ids: string[] } | { ok: false; ref: string; detail: string };

/**
 * The delivery section's run-level plans, each resolved as QA19 says, against
 * the plans that parse in the plans folder; the first that does not resolve
 * comes back with what is wrong (a plan file that does not parse, named in
 * `unparsed`, resolves by its id: its own refusal says why). `at` says where they were read (" at
 * <commit>" for a run, "" for a checkout). `yoke config check` and a stage's
 * entry both call this, so the check passes only what the stage accepts.
 */
export function resolveRunPlans(
  refs: readonly string[],
  plans: readonly { id: string; name: string }[],
  /** The plans folder, the commit the plans were read at (as text for messages), and the files there that did not parse. */
  where: { plansDir: string; at: string; unparsed?: readonly string[] },
): RunPlansResult {
  const { plansDir, at, unparsed = [] } = where;
  const ids: string[] = [];
  for (const ref of refs) {
    // A plan file that is there but refused is named by its own refusal, not called missing.
    if (unparsed.includes(ref)) {
      ids.push(ref);
      continue;
    }
    const r = resolvePlanRef(ref, plans);
    if (r.ok) {
      ids.push(r.id);
      continue;
    }
    if (r.reason === 'ambiguous')
      return { ok: false, ref, detail: `the run-level plan "${ref}" matches ${r.ids.join(', ')}` };
    const near = closest(ref, [...new Set(plans.flatMap((p) => [p.id, p.name]))]);
    return {
      ok: false,
      ref,
      detail: `the run-level plan "${ref}" is not in ${plansDir}${at}${near ? `; did you mean "${near}"?` : ''}`,
    };
  }
  return { ok: true, ids };
}
