// LD02: how a reader follows one claim PR through a fleet: when another PR lands first, the base moves and
// an accepted head is validated again on the new base. Those landers of the same head fold into the last.

export function foldRevalidations<R extends { kind: string; headSha: string | null }>(runs: readonly R[]): R[] {
  return runs.filter(
    (r, i) => !(r.kind === 'lander' && runs.slice(i + 1).some((l) => l.kind === 'lander' && l.headSha === r.headSha)),
  );
}
