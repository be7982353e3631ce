// GitHub's permission ladder: the one trust rule every decision about a
// person reads (TR25, TR05, TR09, TR11). GitHub answers one of these for a
// login on a repository; each step includes the ones below it.

export type Permission = 'admin' | 'maintain' | 'write' | 'triage' | 'read' | 'none';

/** The ladder, lowest first. */
export const PERMISSIONS: readonly Permission[] = ['none', 'read', 'triage', 'write', 'maintain', 'admin'];

/** Whether a permission GitHub gave is at least `need`. */
export function permits(have: Permission, need: Exclude<Permission, 'none'>): boolean {
  return PERMISSIONS.indexOf(have) >= PERMISSIONS.indexOf(need);
}

/** Write access or more: what GitHub lets push and merge, and what yoke asks of a writer. */
export const canWrite = (p: Permission): boolean => permits(p, 'write');

/** Maintain access or more: what yoke asks of whoever waives or removes. */
export const canMaintain = (p: Permission): boolean => permits(p, 'maintain');
