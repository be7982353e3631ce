import { Octokit as RestOctokit } from '@octokit/rest';
import { GitHubForge } from '../../src/forge/github/github.js';
import type { Octokit } from '../../src/forge/github/octokit.js';

// GitHubForge against nock: the app's client authenticates as `app-jwt`, an
// installation's as `ghs_inst`; no retries, and no console log of the
// failures a test asks for on purpose.

export const API = 'https://api.github.com';
const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

export const nockClient = (token: string): Octokit =>
  new RestOctokit({ auth: token, request: { retries: 0 }, log: quiet }) as unknown as Octokit;

export const REPO = { owner: 'acme', name: 'api', fullName: 'acme/api', installationId: 7 };

export const nockForge = (): GitHubForge =>
  new GitHubForge({
    appOctokit: async () => nockClient('app-jwt'),
    installationOctokit: async () => nockClient('ghs_inst'),
    now: Date.now,
  });
