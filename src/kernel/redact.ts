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
] as const;

export function redactSecrets(text: string, known: readonly string[] = []): string {
  let out = text;
  for (const v of known) if (v) out = out.split(v).join(REDACTED);
  for (const re of SHAPES)
    out = out.replace(re, (_m, word?: string) =>
      typeof word === 'string' && /^(bearer|token|basic)$/i.test(word) ? `${word} ${REDACTED}` : REDACTED,
    );
  return out;
}
