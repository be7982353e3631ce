import {
  decodeJwt,
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  errors,
  jwksCache,
  jwtVerify,
  type JWKSCacheInput,
  type JWTHeaderParameters,
  type FlattenedJWSInput,
} from 'jose';
import { z } from 'zod';
import { errorText } from '../../kernel/error-text.js';

// Verifies GitHub Actions OIDC tokens with jose against the issuer's
// published keys: fetched with a timeout, at most once per cooldown for an
// unknown key id, and kept when a fetch fails, so an unreachable issuer
// does not turn genuine reports into failures (TR03). Which run a token may
// report for is decided in http/api/run-report.ts.

export interface OidcOptions {
  issuer: string;
  jwksUrl: string;
  audience: string;
  now: () => number;
  fetch?: typeof fetch;
  /** How long one key fetch may take. */
  timeoutMs?: number;
  /** How long after a fetch (good or failed) an unknown key id may cause another. */
  cooldownMs?: number;
  /** How long fetched keys are trusted before they are fetched again. */
  keysMaxAgeMs?: number;
}

/** The claims yoke reads; GitHub's tokens carry many more. */
export const OidcClaims = z
  .object({
    iss: z.string(),
    repository: z.string().optional(),
    repository_id: z.string().optional(),
    run_id: z.string().optional(),
    workflow_ref: z.string().optional(),
    event_name: z.string().optional(),
    ref: z.string().optional(),
    /** Who started the workflow run: for a run yoke dispatched, its app's bot. */
    actor: z.string().optional(),
    /** When it was issued (seconds since the epoch). */
    iat: z.number().optional(),
  })
  .passthrough();
export type OidcClaims = z.infer<typeof OidcClaims>;

/** `fault`: the issuer's keys could not be had, so the token may be good: ask again later. */
export type OidcResult = { ok: true; claims: OidcClaims } | { ok: false; detail: string; fault?: boolean };

type KeyResolver = (
  header: JWTHeaderParameters,
  token: FlattenedJWSInput,
) => ReturnType<ReturnType<typeof createLocalJWKSet>>;

export class OidcVerifier {
  private readonly cache: JWKSCacheInput = {};
  private readonly remote: ReturnType<typeof createRemoteJWKSet>;
  private failedAt: number | null = null;
  /** How many times the issuer's keys were fetched (for tests and the fleet report). */
  fetches = 0;

  constructor(private readonly opts: OidcOptions) {
    const base = opts.fetch ?? fetch;
    const counted: typeof fetch = (input, init) => {
      this.fetches++;
      return base(input, init);
    };
    this.remote = createRemoteJWKSet(new URL(opts.jwksUrl), {
      timeoutDuration: opts.timeoutMs ?? 5000,
      cooldownDuration: opts.cooldownMs ?? 30_000,
      cacheMaxAge: opts.keysMaxAgeMs ?? 10 * 60_000,
      [jwksCache]: this.cache,
      [customFetch]: counted,
    });
  }

  private readonly key: KeyResolver = async (header, token) => {
    const cooldown = this.opts.cooldownMs ?? 30_000;
    const known = 'jwks' in this.cache && this.cache.jwks ? createLocalJWKSet(this.cache.jwks) : null;
    // After a failed fetch, serve what we have until the cooldown passes, rather than asking again per token.
    if (known && this.failedAt !== null && this.opts.now() - this.failedAt < cooldown) return known(header, token);
    try {
      const k = await this.remote(header, token);
      this.failedAt = null;
      return k;
    } catch (err) {
      if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) throw err;
      this.failedAt = this.opts.now();
      if (known) return known(header, token);
      throw err;
    }
  };

  /**
   * A token of the issuer for yoke's audience (or `opts.audience`). With
   * `asIssued`, it is checked as of the moment it was issued: a result handed
   * back through GitHub may be read after its token expired (yoke was down),
   * and the caller then binds its issue time to a run that was live.
   */
  async verify(token: string, opts: { audience?: string; asIssued?: boolean } = {}): Promise<OidcResult> {
    try {
      let at = this.opts.now();
      if (opts.asIssued) {
        const iat = decodeJwt(token).iat;
        if (typeof iat !== 'number') return { ok: false, detail: 'the token says nothing of when it was issued' };
        // Never later than now: a token "issued" in the future is checked as of now, and refused if not yet valid.
        at = Math.min(iat * 1000, at);
      }
      const { payload } = await jwtVerify(token, this.key, {
        issuer: this.opts.issuer,
        audience: opts.audience ?? this.opts.audience,
        algorithms: ['RS256'],
        currentDate: new Date(at),
        clockTolerance: 30,
      });
      const claims = OidcClaims.safeParse(payload);
      return claims.success
        ? { ok: true, claims: claims.data }
        : { ok: false, detail: 'the token claims are malformed' };
    } catch (err) {
      const fault = err instanceof errors.JWKSTimeout || !(err instanceof errors.JOSEError);
      return { ok: false, detail: describe(err), ...(fault ? { fault } : {}) };
    }
  }
}

function describe(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'the token has expired';
  if (err instanceof errors.JWTClaimValidationFailed)
    return `the token's ${err.claim} claim is not accepted (${err.reason})`;
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'the signature does not verify';
  if (err instanceof errors.JWKSNoMatchingKey) return 'no published key matches the token';
  if (err instanceof errors.JWKSTimeout) return "the issuer's keys could not be fetched in time";
  if (err instanceof errors.JOSEAlgNotAllowed) return 'the token is not signed with RS256';
  if (err instanceof errors.JOSEError) return `the token was refused (${err.code})`;
  return `the issuer's keys could not be fetched (${errorText(err)})`;
}
