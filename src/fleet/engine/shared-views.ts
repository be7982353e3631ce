import { createHash } from 'node:crypto';
import { z } from 'zod';
import { forgeWith } from '../../forge/fenced.js';
import type { Forge, RepoRef, RepoView } from '../../forge/types.js';
import type { Store } from '../../store/store.js';
import { listingKey, viewKey } from '../../store/shared-reads.js';
import { NotShared } from '../spawn/pass-deps.js';

// SC09, the pass's side of the shared reading: an installation another live process reads is seen through what that
// process shared in the store (its listing and each repository's view), never read again from GitHub by the pass; the
// installations this process reads, or that nobody reads (a lease lapsed), the pass reads itself, as one yoke always
// did. What the pass decides and writes is unchanged: one serialized pass, whichever process runs it (SP01, SP08).

/** The version of a shared body's shape: a body another yoke version wrote in another shape is not taken. */
const SHAPE = 1;

/**
 * The comments of a view another process reads: its reader handles their commands. One list for all, so a view that
 * stands is the same view from pass to pass (SC10: its facts are taken again). Nothing adds to it.
 */
const HANDLED_BY_THE_READER: RepoView['recentComments'] = [];

/** A repository's view as its reader shares it (its polled comments are the reader's to handle, and stay there). */
interface SharedView {
  shape: typeof SHAPE;
  view: Omit<RepoView, 'recentComments'>;
}

interface SharedListing {
  shape: typeof SHAPE;
  repos: RepoRef[];
}

/** What a reader shares of a repository's view, and its digest: the same view twice has the same text. */
export function viewBody(view: RepoView): { body: string; digest: string } {
  const { recentComments: _handledByTheReader, ...rest } = view;
  return digested({ shape: SHAPE, view: rest } satisfies SharedView);
}

/** What a reader shares of an installation's listing. */
export function listingBody(repos: readonly RepoRef[]): { body: string; digest: string } {
  return digested({ shape: SHAPE, repos: [...repos] } satisfies SharedListing);
}

function digested(value: unknown): { body: string; digest: string } {
  const body = JSON.stringify(value);
  return { body, digest: createHash('sha1').update(body).digest('hex') };
}

const object = (v: unknown) => typeof v === 'object' && v !== null;
/** A shared body as yoke wrote it: of this shape's version, or not taken (null). */
const SharedBody = z.union([
  z.object({ shape: z.literal(SHAPE), view: z.custom<SharedView['view']>(object) }),
  z.object({ shape: z.literal(SHAPE), repos: z.array(z.custom<RepoRef>(object)) }),
]);

function parsed(body: string): SharedView | SharedListing | null {
  try {
    const found = SharedBody.safeParse(JSON.parse(body));
    return found.success ? found.data : null;
  } catch {
    return null; // not JSON: no view of ours
  }
}

interface Snapshot {
  elsewhere: ReadonlyMap<number, string>;
  digests: ReadonlyMap<string, string>;
}

/**
 * The shared reads one process's passes see, kept across passes by digest: a pass fetches the bodies of what changed
 * since the one before, and after a restart, of everything once (SP10: nothing lives only here).
 */
export class SharedViews {
  private readonly known = new Map<string, { digest: string; value: SharedView | SharedListing | null }>();

  constructor(
    private readonly store: Pick<Store, 'installationLeases' | 'sharedReads' | 'processes'>,
    private readonly self: string,
  ) {}

  /**
   * The installations another living process reads now (by their current leases), with who reads each. A dead
   * reader's are the pass's own to read until another process takes them: its last views grow no fresher.
   */
  async readElsewhere(): Promise<Map<number, string>> {
    const living = new Set((await this.store.processes.readers()).map((p) => p.id));
    const out = new Map<number, string>();
    for (const l of await this.store.installationLeases.current())
      if (l.holder !== this.self && living.has(l.holder)) out.set(l.installationId, l.holder);
    return out;
  }

  /** What the last refresh found: who reads each installation read elsewhere, and the digest of each shared read. */
  private seen: Snapshot = { elsewhere: new Map(), digests: new Map() };

  /** Reads who reads what, and the bodies of what changed since the last refresh. */
  async refresh(): Promise<Snapshot> {
    const elsewhere = await this.readElsewhere();
    const digests = elsewhere.size
      ? await this.store.sharedReads.digests([...elsewhere.keys()])
      : new Map<string, string>();
    const changed = [...digests].filter(([key, digest]) => this.known.get(key)?.digest !== digest).map(([k]) => k);
    for (const read of (await this.store.sharedReads.get(changed)).values())
      this.known.set(read.key, { digest: read.digest, value: parsed(read.body) });
    this.seen = { elsewhere, digests };
    return this.seen;
  }

  /** The forge one pass reads through: the shared reads of the installations other processes read, the rest its own. */
  async forPass(forge: Forge): Promise<Forge> {
    const snapshot = await this.refresh();
    return snapshot.elsewhere.size ? this.over(forge, () => snapshot) : forge;
  }

  /**
   * The forge the rest of this process reads opt-in files through (commands, sweeps, delivery): the shared views as
   * its last pass saw them, so the leader's sweeps ask GitHub for no opt-in file another process reads.
   */
  sharing(forge: Forge): Forge {
    return this.over(forge, () => this.seen);
  }

  private over(forge: Forge, at: () => Snapshot): Forge {
    const value = (key: string) => (at().digests.has(key) ? (this.known.get(key)?.value ?? null) : null);
    const viewOf = (repo: RepoRef) => {
      const v = value(viewKey(repo.fullName));
      return v && 'view' in v ? v.view : null;
    };
    const listingOf = (installationId: number) => {
      const v = value(listingKey(installationId));
      return v && 'repos' in v ? v.repos : null;
    };
    const readBy = (installationId: number) => at().elsewhere.get(installationId);
    const own: Pick<Forge, 'listRepos' | 'readRepo' | 'readConfig' | 'standsIn' | 'everRead'> = {
      listRepos: async (installationId, opts) =>
        // Not shared yet (a reader's first tick): the listing is one read, the pass's own.
        (readBy(installationId) !== undefined ? listingOf(installationId) : null) ??
        forge.listRepos(installationId, opts),
      readRepo: async (repo, opts) => {
        const reader = readBy(repo.installationId);
        if (reader === undefined) return forge.readRepo(repo, opts);
        const found = viewOf(repo);
        if (!found) throw new NotShared(repo.fullName, repo.installationId, reader);
        return { ...found, repo, recentComments: HANDLED_BY_THE_READER };
      },
      readConfig: async (repo, opts) =>
        (readBy(repo.installationId) !== undefined ? viewOf(repo)?.config : undefined) ?? forge.readConfig(repo, opts),
      standsIn: (repo, opts) => readBy(repo.installationId) !== undefined || forge.standsIn(repo, opts),
      everRead: (repo) => readBy(repo.installationId) !== undefined || forge.everRead(repo),
    };
    return forgeWith(forge, own);
  }
}
