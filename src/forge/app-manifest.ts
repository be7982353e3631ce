import { Octokit } from '@octokit/rest';
import { z } from 'zod';

// GitHub's app manifest flow, its last step: the code GitHub hands back after
// someone creates the app from yoke's manifest is exchanged for the app's id,
// private key and webhook secret. Unauthenticated, once per code.

const GhConversion = z.object({
  id: z.number(),
  slug: z.string(),
  pem: z.string(),
  webhook_secret: z.string().nullable(),
  html_url: z.string(),
});

export interface CreatedApp {
  id: number;
  slug: string;
  pem: string;
  webhookSecret: string | null;
  htmlUrl: string;
}

/** `POST /app-manifests/{code}/conversions` on github.com or a GitHub Enterprise Server (`apiBaseUrl`). */
export async function convertAppManifest(code: string, apiBaseUrl: string): Promise<CreatedApp> {
  // A refusal is thrown to the setup page, which shows it with what to do; Octokit's own request log would
  // print the same failure again on stderr, with nothing to act on.
  const quiet = () => {};
  const o = new Octokit({
    baseUrl: apiBaseUrl,
    request: { retries: 0 },
    log: { debug: quiet, info: quiet, warn: console.warn, error: quiet },
  });
  const { data } = await o.request('POST /app-manifests/{code}/conversions', { code });
  const c = GhConversion.parse(data);
  return { id: c.id, slug: c.slug, pem: c.pem, webhookSecret: c.webhook_secret, htmlUrl: c.html_url };
}
