import { dueSince } from '../../kernel/spread.js';
import type { RepoRef } from '../types.js';

/**
 * SC10: each installation's last listing of its repositories, and the app's last list of its installations, standing
 * in as an idle repository's view does: until its slot of the period comes round (at the installation's own phase),
 * or `relist` asks for it again because GitHub said an installation or its repositories changed.
 */
export class Listings {
  private held = new Map<number, { at: number; repos: RepoRef[] }>();
  /** The app's installations, as last listed: they stand in the same way, until any installation is listed again. */
  private installationsHeld: { at: number; ids: number[] } | null = null;

  constructor(private readonly now: () => number) {}

  /** The app's installations: as last listed while their list stands in (given `maxAgeMs`), else listed now. */
  async installations(opts: { maxAgeMs: number } | undefined, list: () => Promise<number[]>): Promise<number[]> {
    const held = this.installationsHeld;
    if (opts && held && this.stands('installations', held.at, opts.maxAgeMs)) return [...held.ids];
    const ids = await list();
    this.installationsHeld = { at: this.now(), ids: [...ids] };
    return ids;
  }

  private stands(slot: string, at: number, maxAgeMs: number): boolean {
    const now = this.now();
    return now - at < maxAgeMs && !dueSince(slot, at, now, maxAgeMs);
  }

  keep(installationId: number, repos: readonly RepoRef[]): void {
    this.held.set(installationId, { at: this.now(), repos: [...repos] });
  }

  /** The listing, while it stands in; null: list the installation now. */
  standing(installationId: number, maxAgeMs: number): RepoRef[] | null {
    const held = this.held.get(installationId);
    return held && this.stands(`installation ${installationId}`, held.at, maxAgeMs) ? [...held.repos] : null;
  }

  relist(installationId: number): void {
    this.held.delete(installationId);
    this.installationsHeld = null;
  }
}
