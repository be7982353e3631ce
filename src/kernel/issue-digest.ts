import { createHash } from 'node:crypto';

// TR24: what a person approved when they labelled an issue (or confirmed it
// with `/yoke start`): its title and its body, as one digest. yoke records it,
// sends it with every run of the issue, and the runner refuses to work on an
// issue whose title or body it reads differently.

/** The digest of an issue's title and body, as GitHub gives them (line endings aside). */
export const issueDigest = (title: string, body: string): string =>
  createHash('sha256')
    .update(title.replace(/\r\n/g, '\n'))
    .update('\0')
    .update(body.replace(/\r\n/g, '\n'))
    .digest('hex')
    .slice(0, 32);
