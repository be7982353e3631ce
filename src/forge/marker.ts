import { z } from 'zod';

// The verdict marker: a hidden, versioned, machine-readable line in a PR
// comment, followed by a summary people read. yoke writes it for each lander
// verdict and reads it back from polled comments; this module is the one
// validation core every caller shares (SP18).

export const MARKER_VERSION = 1;
const MARKER_RE = /<!--\s*yoke:verdict\s+v(\d+)\s+(.*?)\s*-->/s;

export const MarkerPayload = z
  .object({
    run: z.string().min(1).max(100),
    sha: z.string().regex(/^[0-9a-f]{7,64}$/, 'sha must be a hex commit id'),
    verdict: z.enum(['accept', 'reject']),
  })
  .strict();
export type MarkerPayload = z.infer<typeof MarkerPayload>;

const SUMMARY_LIMIT = 4000;

/**
 * The verdict comment: the marker (its record), then in words what was judged: the head, on the base it would
 * land on (LD01), after the claim PRs stacked ahead of it (`ahead`, LD05).
 */
export function encodeMarker(
  payload: MarkerPayload,
  summary: string,
  base: string | null = null,
  ahead: readonly number[] = [],
): string {
  const verdictWord = payload.verdict === 'accept' ? 'accepted' : 'rejected';
  const short = payload.sha.slice(0, 7);
  const after = ahead.length ? ` after ${ahead.map((n) => `#${n}`).join(', ')} (the claim PRs ahead of it)` : '';
  const on = base ? ` merged onto \`${base.slice(0, 7)}\`${after}, the base it would land on` : '';
  const text =
    summary.length > SUMMARY_LIMIT
      ? `${summary.slice(0, SUMMARY_LIMIT)}\n\n(summary cut at ${SUMMARY_LIMIT} characters)`
      : summary;
  return [
    `<!-- yoke:verdict v${MARKER_VERSION} ${JSON.stringify(payload)} -->`,
    `**yoke lander ${verdictWord}** this PR at \`${short}\`${on} (run \`${payload.run}\`).`,
    '',
    text.trim() || '_The lander gave no summary._',
  ].join('\n');
}

export type DecodedMarker =
  { kind: 'none' } | { kind: 'marker'; payload: MarkerPayload } | { kind: 'invalid'; reason: string };

export function decodeMarker(body: string): DecodedMarker {
  const m = MARKER_RE.exec(body);
  if (!m) return { kind: 'none' };
  const version = Number(m[1]);
  if (version !== MARKER_VERSION) return { kind: 'invalid', reason: `unknown marker version v${version}` };
  let json: unknown;
  try {
    json = JSON.parse(m[2]!);
  } catch {
    return { kind: 'invalid', reason: 'marker JSON does not parse' };
  }
  const parsed = MarkerPayload.safeParse(json);
  if (!parsed.success)
    return { kind: 'invalid', reason: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') };
  return { kind: 'marker', payload: parsed.data };
}

export interface MarkerComment {
  id: number;
  author: string;
  body: string;
}

export interface VerdictReading {
  /** The newest trusted verdict at the current head, if any. */
  current: (MarkerPayload & { commentId: number }) | null;
  /** Trusted verdicts for older heads: stale, never acted on. */
  stale: number;
  /** Markers ignored, and why (forged by another login, bad JSON, ...). */
  ignored: { commentId: number; author: string; reason: string }[];
}

/** Reads the verdict for `headSha` from a PR's comments (oldest first). */
export function readVerdict(
  comments: readonly MarkerComment[],
  headSha: string,
  trustedLogins: ReadonlySet<string>,
): VerdictReading {
  const reading: VerdictReading = { current: null, stale: 0, ignored: [] };
  for (const c of comments) {
    const decoded = decodeMarker(c.body);
    if (decoded.kind === 'none') continue;
    if (!trustedLogins.has(c.author.toLowerCase())) {
      reading.ignored.push({ commentId: c.id, author: c.author, reason: `written by ${c.author}, not by yoke` });
      continue;
    }
    if (decoded.kind === 'invalid') {
      reading.ignored.push({ commentId: c.id, author: c.author, reason: decoded.reason });
      continue;
    }
    if (decoded.payload.sha !== headSha) {
      reading.stale++;
      continue;
    }
    reading.current = { ...decoded.payload, commentId: c.id };
  }
  return reading;
}
