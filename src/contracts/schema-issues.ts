import { type z } from 'zod';

/**
 * Turns zod issues into messages that name the file, the field path and what would be valid, e.g.
 * `deploy.yaml: parameters[0].requirement: expected one of required, optional, user_prompt (got "must")`.
 */
export function formatSchemaIssues(file: string, issues: readonly z.core.$ZodIssue[], input: unknown): string[] {
  return issues.map((issue) => {
    const path = formatPath(issue.path);
    const received = valueAt(input, issue.path);
    const where = path === '' ? 'top level' : path;
    if (received === undefined && issue.code === 'invalid_type') {
      return `${file}: ${where}: is required (${issue.message})`;
    }
    const got = received === undefined ? '' : ` (got ${describeValue(received)})`;
    return `${file}: ${where}: ${issue.message}${got}`;
  });
}

/** `['parameters', 0, 'key']` → `parameters[0].key`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const part of path) {
    if (typeof part === 'number') text += `[${part}]`;
    else text += text === '' ? String(part) : `.${String(part)}`;
  }
  return text;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let current: unknown = input;
  for (const part of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[part];
  }
  return current;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
