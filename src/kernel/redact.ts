// Secrets out of text that yoke keeps or publishes (QA evidence, deploy
// output in the tracking issue, a run's summary): output of commands a
// repository controls may print whatever reached them. Known values are
// replaced exactly; known shapes (GitHub tokens, private keys, JWTs, model
// API keys, bearer headers) by pattern.

/** Known secret shapes, each with the name a finding gives it (the secret scan, TR16, reads them too). */
export const SECRET_SHAPES: readonly { kind: string; re: RegExp }[] = [
  { kind: 'a private key', re: /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g },
  { kind: 'a GitHub token', re: /\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})\b/g },
  { kind: 'a JSON web token', re: /\beyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]{8,}\b/g },
  { kind: 'an Anthropic key', re: /\bsk-ant-[A-Za-z0-9_-]{16,}\b/g },
  { kind: 'an OpenAI key', re: /\bsk-[A-Za-z0-9_-]{16,}\b/g },
  { kind: 'an AWS access key', re: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g },
];

const SHAPES: RegExp[] = [...SECRET_SHAPES.map((s) => s.re), /\b(Bearer|token|basic)\s+[\w.~+/-]{16,}=*/gi];

export const REDACTED = '[redacted]';

/** Secret values worth looking for exactly: those of these variables that are long enough to be secrets. */
export function secretValues(env: Record<string, string | undefined>, names: readonly string[]): string[] {
  const out: string[] = [];
  for (const name of names) {
    for (const v of (env[name] ?? '').split(',')) if (v.trim().length >= 12) out.push(v.trim());
  }
  return out.sort((a, b) => b.length - a.length);
}

/** The variables yoke's own secrets live in. */
export const SECRET_VARIABLES = [
  'YOKE_TOKEN',
  'YOKE_API_TOKENS',
  'PRIVATE_KEY',
  'WEBHOOK_SECRET',
  'GITHUB_TOKEN',
  'GH_TOKEN',
  'YOKE_RUN_SECRET',
  'ANTHROPIC_API_KEY',
  'CLAUDE_CODE_OAUTH_TOKEN',
  'CODEX_API_KEY',
  'OPENAI_API_KEY',
  'YOKE_DATABASE_URL',
  'YOKE_METRICS_TOKEN',
  'OTEL_EXPORTER_OTLP_HEADERS',
] as const;

/** A value that is a token, not a URL or a sentence: looked for in its encodings and pieces too. */
const TOKEN_LIKE = /^[\w\-.+=~]+$/;

/** The width of the pieces of a secret looked for on their own (a value split across lines or strings). */
const PIECE = 16;
/** Pieces start every few characters: any run of PIECE + PIECE_STEP - 1 characters of a value holds one whole. */
const PIECE_STEP = 4;

/** The value whole, and for a long one each piece of it, the last one flush with its end. */
function pieces(v: string): string[] {
  if (v.length < PIECE + 8) return [v];
  const out = [v];
  for (let i = 0; i + PIECE <= v.length; i += PIECE_STEP) out.push(v.slice(i, i + PIECE));
  out.push(v.slice(-PIECE));
  return out;
}

/** The part of base64 (or base64url) of `v` that is the same wherever `v` sits in a longer encoded text. */
function base64Cores(v: string): string[] {
  const out: string[] = [];
  for (const pad of ['', 'x', 'xx']) {
    for (const enc of ['base64', 'base64url'] as const) {
      const full = Buffer.from(pad + v, 'utf8')
        .toString(enc)
        .replace(/=+$/, '');
      // The first characters mix in what came before; the last mix in what comes after.
      const start = Math.ceil(((pad.length + 1) * 4) / 3) + 1;
      const core = full.slice(start, full.length - 4);
      if (core.length >= PIECE) out.push(core);
    }
  }
  return out;
}

/**
 * TR38: the forms of known secret values looked for in what an agent writes: each value as it is and
 * reversed, in hex, base64 and base64url (wherever it sits in a longer encoded text), and, for a value
 * long enough, each of its pieces on its own (a value split in two). A guard against accidents and
 * careless exfiltration: an agent that means to can always encode a value some other way.
 */
export function secretForms(values: readonly string[]): string[] {
  const out = new Set<string>();
  for (const v of values) {
    if (!v) continue;
    const reversed = [...v].reverse().join('');
    // Only a value shaped like a token (no slash, colon or space: not a URL or a sentence, whose pieces are
    // ordinary text such as `http://127.0.0.1`) is looked for in pieces and encodings.
    if (!TOKEN_LIKE.test(v)) {
      out.add(v);
      out.add(reversed);
      continue;
    }
    const hex = Buffer.from(v, 'utf8').toString('hex');
    for (const form of [v, reversed, hex, hex.toUpperCase(), ...base64Cores(v)])
      for (const p of pieces(form)) out.add(p);
  }
  return [...out].sort((a, b) => b.length - a.length);
}

export function redactSecrets(text: string, known: readonly string[] = []): string {
  let out = text;
  for (const v of secretForms(known)) if (v) out = out.split(v).join(REDACTED);
  for (const re of SHAPES)
    out = out.replace(re, (_m, word?: string) =>
      typeof word === 'string' && /^(bearer|token|basic)$/i.test(word) ? `${word} ${REDACTED}` : REDACTED,
    );
  return out;
}
