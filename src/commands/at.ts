import type { FleetContext } from '../fleet/context.js';
import type { CommentView, RepoRef } from '../forge/types.js';
import type { Permission } from '../kernel/permission.js';

/** Where a command was written, and by whom with what permission: what its handler acts on. */
export interface CommandAt {
  ctx: FleetContext;
  repo: RepoRef;
  comment: CommentView;
  permission: Permission;
}
