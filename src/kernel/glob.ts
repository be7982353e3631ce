// Path globs as GitHub's own settings write them (`.github/**`, `*.tf`), for
// the protected paths and the agents' settings alike.

const compiled = new Map<string, RegExp>();

/** A glob as a regular expression: `**` spans folders, `*` and `?` stay within one; a glob with no `/` matches at the root. */
export function globToRegExp(glob: string): RegExp {
  let known = compiled.get(glob);
  if (!known) {
    // Each pass checks every claim PR's files against the same few globs: each is compiled once. A RegExp without
    // the g or y flag keeps no state between tests, so one can be shared.
    known = compile(glob);
    if (compiled.size < 10_000) compiled.set(glob, known);
  }
  return known;
}

function compile(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      // `**/` is any number of folders (none included); a trailing `**` is everything below.
      if (glob[i + 2] === '/') {
        re += '(?:.*/)?';
        i += 2;
      } else {
        re += '.*';
        i += 1;
      }
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  // Case-insensitive: a near miss (`.Claude/`) is held too, failing closed.
  return new RegExp(`^${re}$`, 'i');
}
