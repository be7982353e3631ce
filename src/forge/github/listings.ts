import { dueSince } from '../../kernel/spread.js';
import type { RepoRef } from '../types.js';

/**
 * SC10: each installation's last listing of its repositories, standing in as an idle repository's view does: until
 * its slot of the period comes round (at the installation's own phase), or `relist` asks for it again because GitHub
 * said its repositories changed.
 */
export class Listings {
  private held = new Map<number, { at: number; repos: RepoRef[] }>();

  constructor(private readonly now: () => number) {}

  keep(installationId: number, repos: readonly RepoRef[]): void {
    this.held.set(installationId, { at: this.now(), repos: [...repos] });
  }

  /** The listing, while it stands in; null: list the installation now. */
  standing(installationId: number, maxAgeMs: number): RepoRef[] | null {
    const held = this.held.get(installationId);
    const now = this.now();
    if (!held || now - held.at >= maxAgeMs || dueSince(`installation ${installationId}`, held.at, now, maxAgeMs))
      return null;
    return [...held.repos];
  }

  relist(installationId: number): void {
    this.held.delete(installationId);
  }
}
