import type { Refusal } from './codes/table.js';

// The two texts every room's replies are made of: a refusal as people read
// it, and a reply to a comment command. The rooms' own comments are named
// message functions next to their users (fleet/notices/messages.ts,
// delivery/messages.ts); tests compare whole texts.

/** A refusal as people read it: what happened, then the command that recovers. */
export function refusalText(r: Refusal): string {
  return `${r.message}\n\n**To recover:** ${r.recovery}`;
}

/** The reply to a comment command: it mentions the commenter once. */
export function commandReply(author: string, text: string): string {
  return `@${author} ${text}`;
}
