// Who is a person to tell. A GitHub App or Actions acts as `name[bot]`; it
// reads no notice and answers none, so a notice is never addressed to one.

export const isBotLogin = (login: string | null | undefined): boolean =>
  typeof login === 'string' && /\[bot\]$/i.test(login);
