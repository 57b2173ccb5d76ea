/**
 * MCP allows `.` and other characters in tool names; model providers accept only `[A-Za-z0-9_-]`. The
 * model sees the safe form; calls go to the server under the original name.
 */
export function modelSafeToolName(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9_-]/g, '_');
  return safe.length > 0 ? safe : 'tool';
}

/** `name`, or `name_2`, `name_3`, ... when a tool of this server already has it (two names can map to one safe form). */
export function uniqueName(name: string, used: Set<string>): string {
  let candidate = name;
  for (let suffix = 2; used.has(candidate); suffix += 1) candidate = `${name}_${suffix}`;
  used.add(candidate);
  return candidate;
}
