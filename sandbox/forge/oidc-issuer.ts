import { createSign, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';

// GitHub-style OIDC tokens for sandbox workflow runs, signed by a key whose
// public half is published as a JWKS, the way token.actions.githubusercontent.com does.

export interface OidcClaims {
  aud: string;
  repository: string;
  repository_id: string;
  run_id: string;
  workflow: string;
  workflow_ref: string;
  ref: string;
  event_name: string;
  actor: string;
}

export class OidcIssuer {
  private readonly privateKey: KeyObject;
  readonly kid = randomBytes(8).toString('hex');
  readonly jwks: { keys: object[] };

  constructor(public issuer: string) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    this.privateKey = privateKey;
    this.jwks = { keys: [{ ...publicKey.export({ format: 'jwk' }), kid: this.kid, use: 'sig', alg: 'RS256' }] };
  }

  mint(claims: OidcClaims, nowMs = Date.now()): string {
    const now = Math.floor(nowMs / 1000);
    const enc = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const head = enc({ alg: 'RS256', typ: 'JWT', kid: this.kid });
    const body = enc({
      iss: this.issuer,
      sub: `repo:${claims.repository}:ref:${claims.ref}`,
      iat: now,
      nbf: now - 5,
      exp: now + 600,
      repository_owner: claims.repository.split('/')[0],
      ...claims,
    });
    const sig = createSign('RSA-SHA256').update(`${head}.${body}`).sign(this.privateKey).toString('base64url');
    return `${head}.${body}.${sig}`;
  }
}
