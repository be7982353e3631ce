import { createPublicKey, verify as verifySignature, type JsonWebKey } from 'node:crypto';
import { z } from 'zod';

// Verifies GitHub Actions OIDC tokens (RS256 JWTs) against the issuer's
// published keys. The issuer is configurable so tests and the sandbox can
// trust keys they make themselves.

export interface OidcOptions {
  issuer: string;
  jwksUrl: string;
  audience: string;
  now: () => number;
  fetch?: typeof fetch;
  /** How long fetched keys are trusted before they are fetched again. */
  keysMaxAgeMs?: number;
}

const Header = z.object({ alg: z.literal('RS256'), kid: z.string().optional() });
const Claims = z
  .object({
    iss: z.string(),
    aud: z.union([z.string(), z.array(z.string())]),
    exp: z.number(),
    nbf: z.number().optional(),
    iat: z.number().optional(),
    repository: z.string().optional(),
    run_id: z.string().optional(),
  })
  .passthrough();
export type OidcClaims = z.infer<typeof Claims>;

const Jwks = z.object({ keys: z.array(z.object({ kty: z.string(), kid: z.string().optional(), n: z.string().optional(), e: z.string().optional() }).passthrough()) });

export type OidcResult = { ok: true; claims: OidcClaims } | { ok: false; detail: string };

const decodePart = (part: string): unknown => JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));

export class OidcVerifier {
  private keys: { at: number; keys: z.infer<typeof Jwks>['keys'] } | null = null;

  constructor(private readonly opts: OidcOptions) {}

  private async loadKeys(force: boolean): Promise<z.infer<typeof Jwks>['keys']> {
    const maxAge = this.opts.keysMaxAgeMs ?? 10 * 60_000;
    if (!force && this.keys && this.opts.now() - this.keys.at < maxAge) return this.keys.keys;
    const res = await (this.opts.fetch ?? fetch)(this.opts.jwksUrl);
    if (!res.ok) throw new Error(`the issuer's keys could not be fetched (${res.status})`);
    const parsed = Jwks.parse(await res.json());
    this.keys = { at: this.opts.now(), keys: parsed.keys };
    return parsed.keys;
  }

  async verify(token: string): Promise<OidcResult> {
    const parts = token.split('.');
    if (parts.length !== 3) return { ok: false, detail: 'not a JWT' };
    const [h, p, s] = parts as [string, string, string];
    let header: z.infer<typeof Header>;
    let claims: OidcClaims;
    try {
      header = Header.parse(decodePart(h));
      claims = Claims.parse(decodePart(p));
    } catch {
      return { ok: false, detail: 'the token header or claims are malformed (RS256 expected)' };
    }
    let keys;
    try {
      keys = await this.loadKeys(false);
      if (header.kid && !keys.some((k) => k.kid === header.kid)) keys = await this.loadKeys(true);
    } catch (err) {
      return { ok: false, detail: err instanceof Error ? err.message : String(err) };
    }
    const jwk = keys.find((k) => k.kid === header.kid) ?? (header.kid ? undefined : keys[0]);
    if (!jwk) return { ok: false, detail: `no published key has kid ${header.kid}` };
    let good = false;
    try {
      const key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
      good = verifySignature('RSA-SHA256', Buffer.from(`${h}.${p}`), key, Buffer.from(s, 'base64url'));
    } catch {
      good = false;
    }
    if (!good) return { ok: false, detail: 'the signature does not verify' };
    const nowS = Math.floor(this.opts.now() / 1000);
    if (claims.iss.replace(/\/$/, '') !== this.opts.issuer) return { ok: false, detail: `issuer ${claims.iss} is not trusted` };
    const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (!aud.includes(this.opts.audience)) return { ok: false, detail: `audience ${aud.join(', ')} is not ${this.opts.audience}` };
    if (claims.exp < nowS - 30) return { ok: false, detail: 'the token has expired' };
    if (claims.nbf !== undefined && claims.nbf > nowS + 30) return { ok: false, detail: 'the token is not valid yet' };
    return { ok: true, claims };
  }
}
