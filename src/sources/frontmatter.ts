import { parse, YAMLParseError } from 'yaml';
import { isRecord } from '../contracts/recipe-schema';
import { parseYamlDocument } from './yaml-document';

/**
 * Reads the frontmatter of an agent file the way Claude Code does. Strict YAML goes through the YAML
 * parser. Many published agent files are not strict YAML, mostly because `description` holds example
 * dialogues with an unquoted `: ` (`description: Use this agent when … Examples: <example>Context: …`)
 * or runs over several lines. Claude Code still reads those, so errand reads them key by key: each
 * top-level `key:` line starts a field, the lines under it (indented or not) continue it, and a field
 * whose text is not valid YAML on its own is read as plain text. Each field read that way gets a
 * warning naming the file and the key, so the author can quote it.
 */

/** Outcome of reading frontmatter: the fields, or an error naming the file and line. */
export type FrontmatterReading = { ok: true; value: unknown; warnings: string[] } | { ok: false; error: string };

/** A top-level `key:` line (column 0; the value may be empty, e.g. a list or map follows). */
const keyLine = /^([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]|$)/;

interface Field {
  key: string;
  /** 1-based line of the `key:` line within the frontmatter. */
  line: number;
  lines: string[];
}

/**
 * Reads frontmatter text (without the `---` fences). `knownKeys` are the field names a file may use:
 * a column-0 `word:` line inside a plain-text value (an `Examples:` or `user:` line of an example
 * dialogue) starts a new field only when `word` is known, or looks like a field name outside an open
 * `<example>` block, so example dialogues stay part of the description.
 */
export function readFrontmatter(text: string, file: string, knownKeys: ReadonlySet<string>): FrontmatterReading {
  const where = `${file} (frontmatter)`;
  const strict = parseYamlDocument(text, where);
  if (strict.ok) return { ok: true, value: strict.value, warnings: [] };

  const fields: Field[] = [];
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  for (const [index, line] of lines.entries()) {
    const current = fields[fields.length - 1];
    // A comment line, as YAML reads it (a `#` at column 0 also ends a plain multi-line value there).
    if (line.startsWith('#')) continue;
    const match = keyLine.exec(line);
    if (match && (current === undefined || startsField(match[1] ?? '', current, knownKeys))) {
      fields.push({ key: match[1] ?? '', line: index + 1, lines: [line] });
      continue;
    }
    if (current === undefined) {
      if (line.trim() === '') continue;
      return { ok: false, error: `${where}: line ${index + 1}: expected a field ("key: value") at the top level` };
    }
    current.lines.push(line);
  }

  const value: Record<string, unknown> = {};
  const warnings: string[] = [];
  for (const field of fields) {
    if (Object.hasOwn(value, field.key)) {
      return { ok: false, error: `${where}: line ${field.line}: ${field.key}: the field is given twice; keep one` };
    }
    const reading = readField(field);
    value[field.key] = reading.value;
    if (reading.problem !== undefined) {
      warnings.push(`${file}: ${field.key}: not valid YAML (${reading.problem}); read as plain text up to the next field, as Claude Code reads it (quote the value to silence this warning)`);
    }
  }
  if (warnings.length === 0) {
    const reason = strict.error.slice(strict.error.indexOf('not valid YAML: ') + 'not valid YAML: '.length);
    warnings.push(`${file}: frontmatter: not valid YAML as a whole (${reason}); read key by key`);
  }
  return { ok: true, value, warnings };
}

/** Whether a column-0 `key:` line starts a new field rather than continuing the current one. */
function startsField(key: string, current: Field, knownKeys: ReadonlySet<string>): boolean {
  if (knownKeys.has(key)) return true;
  // Example dialogues (`<example>` … `user: "…"` … `</example>`) belong to the field they are in.
  const body = current.lines.join('\n');
  const open = (body.match(/<example>/g) ?? []).length - (body.match(/<\/example>/g) ?? []).length;
  if (open > 0) return false;
  // A capitalised word (`Examples:`, `Context:`) reads as prose; a lower-case identifier as a field.
  return /^[a-z]/.test(key);
}

/** One field's value: parsed as YAML when its text is valid on its own, else its plain text. */
function readField(field: Field): { value: unknown; problem?: string } {
  const text = field.lines.join('\n');
  try {
    const parsed: unknown = parse(text, { uniqueKeys: true });
    if (isRecord(parsed) && Object.keys(parsed).length === 1 && Object.hasOwn(parsed, field.key)) return { value: parsed[field.key] };
  } catch (error) {
    return { value: plainText(field), problem: firstLine(error) };
  }
  return { value: plainText(field), problem: 'the text under it does not belong to it' };
}

/**
 * The field's text as a YAML plain scalar would fold it: lines trimmed and joined with a space, an
 * empty line kept as a line break.
 */
function plainText(field: Field): string {
  const [first = '', ...rest] = field.lines;
  const parts = [first.slice(first.indexOf(':') + 1), ...rest].map((line) => line.trim());
  let folded = '';
  for (const part of parts) {
    if (part === '') folded += '\n';
    else folded += folded === '' || folded.endsWith('\n') ? part : ` ${part}`;
  }
  return folded.trim();
}

function firstLine(error: unknown): string {
  const message = error instanceof YAMLParseError || error instanceof Error ? error.message : String(error);
  return (message.split('\n')[0] ?? message).replace(/ at line \d+, column \d+:?$/, '');
}
