// `yoke doctor`'s reading check, pure (SC08): which yoke process reads the repository's installation, and how the
// reading of the fleet is spread over the yoke processes on this store.

/** A yoke process that reads its share, and the installations it holds now. */
export interface ReaderFacts {
  id: string;
  host: string;
  pid: number;
  installations: number[];
}

/** What the reading check reads from the store: the reading processes, and who holds this installation's lease. */
export interface ReadingFacts {
  installationId: number;
  readers: ReaderFacts[];
  /** The process whose lease on the installation has not lapsed, or null. */
  holder: string | null;
}

export type ReadingJudged = { state: 'ok'; text: string; fix: null } | { state: 'failed'; text: string; fix: string };

const who = (r: ReaderFacts) => `${r.id} (host ${r.host}, pid ${r.pid})`;

/** Every reading process, and the installations each reads. */
const spread = (readers: readonly ReaderFacts[]): string =>
  `${readers.length} yoke processes share the reading: ${readers
    .map((r) => `${who(r)} reads ${r.installations.length ? r.installations.join(', ') : 'nothing yet'}`)
    .join('; ')}.`;

/** Pure: the reading check, from what the store holds. */
export function judgeReading(f: ReadingFacts): ReadingJudged {
  const id = f.installationId;
  const holder = f.readers.find((r) => r.id === f.holder);
  if (f.holder !== null && !holder)
    return {
      state: 'failed',
      text: `Installation ${id} is leased to yoke process ${f.holder}, which no longer runs: no process reads it until that lease lapses.`,
      fix: `Nothing, if a yoke server runs on this store: it takes installation ${id} over at its next tick once that process's lease has lapsed (30 s after its death). If none runs, start one (\`npm start\`, or your service manager's unit).`,
    };
  if (f.readers.length <= 1) {
    const only = f.readers[0];
    return {
      state: 'ok',
      text: only
        ? `One yoke process, ${who(only)}, reads every installation, this one (${id}) too.`
        : `No yoke process has taken a share of the reading yet: the pass reads installation ${id} itself.`,
      fix: null,
    };
  }
  return {
    state: 'ok',
    text: holder
      ? `Installation ${id} is read by yoke process ${who(holder)}. ${spread(f.readers)}`
      : `No process has taken installation ${id} yet: the pass reads it itself until one does, at its next tick. ${spread(f.readers)}`,
    fix: null,
  };
}
