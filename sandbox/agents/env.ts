/** A variable the sandbox's runner or launcher must have set for this agent. */
export function requireEnv(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}
