/**
 * The first pass of errand's recipe template engine: splits template text into literal text, `{{ … }}`
 * outputs and `{% … %}` statements. Comments (`{# … #}`) are dropped, `{% raw %}` blocks become text, and
 * the whitespace markers (`{{-`, `-}}`, `{%-`, `-%}`, `{#-`, `-#}`) strip the whitespace beside them, as in
 * Jinja. Pure code: it reads characters and nothing else.
 */

/** One piece of a template. `line` is 1-based, for error messages. */
export type TemplatePiece =
  | { kind: 'text'; text: string }
  | { kind: 'output'; source: string; line: number }
  | { kind: 'statement'; source: string; line: number };

/** A template that cannot be read: the message and the line it is about. */
export class TemplateSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
    this.name = 'TemplateSyntaxError';
  }
}

/** Line numbers of offsets, read in increasing order: one pass over the text in all (no rescans). */
class LineCounter {
  private offset = 0;
  private line = 1;

  constructor(private readonly text: string) {}

  at(offset: number): number {
    for (; this.offset < offset && this.offset < this.text.length; this.offset += 1) if (this.text.charCodeAt(this.offset) === 10) this.line += 1;
    return this.line;
  }
}

/**
 * The end of a tag's inside: the offset of its closing `}}` / `%}` / `#}` (or of the `-` before it),
 * skipping quoted strings and nested braces so `{{ {"a": "}}"} }}` reads whole. -1 when never closed.
 */
function findClose(text: string, from: number, close: string): number {
  if (close === '#}') return text.indexOf('#}', from);
  let depth = 0;
  let quote = '';
  for (let index = from; index < text.length; index += 1) {
    const char = text[index];
    if (quote !== '') {
      if (char === '\\') index += 1;
      else if (char === quote) quote = '';
      continue;
    }
    if (char === '"' || char === "'") quote = char;
    else if (depth === 0 && text.startsWith(close, index)) return index;
    else if (char === '{' || char === '[' || char === '(') depth += 1;
    else if ((char === '}' || char === ']' || char === ')') && depth > 0) depth -= 1;
  }
  return -1;
}

const endRawPattern = /\{%(-?)\s*endraw\s*(-?)%\}/g;

/** Splits `text` into pieces, or throws {@link TemplateSyntaxError} for a tag that is never closed. */
export function lexTemplate(text: string): TemplatePiece[] {
  const pieces: TemplatePiece[] = [];
  let position = 0;
  let stripNext = false;
  const pushText = (value: string, stripBefore: boolean) => {
    // trimStart/trimEnd strip what `\s` matches, in linear time (`/\s+$/` is quadratic on long runs of spaces).
    let chunk = stripNext ? value.trimStart() : value;
    if (stripBefore) chunk = chunk.trimEnd();
    stripNext = false;
    if (chunk !== '') pieces.push({ kind: 'text', text: chunk });
  };
  const lines = new LineCounter(text);
  const opening = /\{[{%#]/g;
  while (position < text.length) {
    opening.lastIndex = position;
    const found = opening.exec(text);
    if (!found) {
      pushText(text.slice(position), false);
      break;
    }
    const start = found.index;
    const type = text[start + 1];
    const close = type === '{' ? '}}' : type === '%' ? '%}' : '#}';
    const trimBefore = text[start + 2] === '-';
    pushText(text.slice(position, start), trimBefore);
    const innerStart = start + 2 + (trimBefore ? 1 : 0);
    const end = findClose(text, innerStart, close);
    const line = lines.at(start);
    if (end < 0) throw new TemplateSyntaxError(`"${text.slice(start, start + 2)}" is never closed with "${close}"`, line);
    const trimAfter = text[end - 1] === '-' && end - 1 >= innerStart;
    const inner = text.slice(innerStart, trimAfter ? end - 1 : end);
    position = end + close.length;
    stripNext = trimAfter;
    if (type === '#') continue;
    if (type === '{') {
      pieces.push({ kind: 'output', source: inner, line });
      continue;
    }
    if (/^\s*raw\s*$/.test(inner)) {
      endRawPattern.lastIndex = position;
      const endRaw = endRawPattern.exec(text);
      if (!endRaw) throw new TemplateSyntaxError('{% raw %} is never closed with {% endraw %}', line);
      let raw = text.slice(position, endRaw.index);
      if (trimAfter) raw = raw.trimStart();
      if (endRaw[1] === '-') raw = raw.trimEnd();
      stripNext = false;
      if (raw !== '') pieces.push({ kind: 'text', text: raw });
      position = endRaw.index + endRaw[0].length;
      stripNext = endRaw[2] === '-';
      continue;
    }
    pieces.push({ kind: 'statement', source: inner, line });
  }
  return pieces;
}

/** True for `{{ name }}`: a plain variable, which goose never passes through as text. */
function isPlainName(inner: string): boolean {
  return /^\s*[A-Za-z_][A-Za-z0-9_]*\s*$/.test(inner);
}

/** True for the characters `.` does not match in a JavaScript pattern (the ends of a line). */
function isLineEnd(code: number): boolean {
  return code === 10 || code === 13 || code === 0x2028 || code === 0x2029;
}

/**
 * The one-line `{{ … }}` of `text`, as `/\{\{(.*?)\}\}/g` finds them, in one pass: for each `{{`, the
 * first `}}` after it, if no line ends before it. The pattern itself, restarted at every `{` of a long
 * line without a `}}`, scans to the line's end each time (quadratic); here the next `}}` and the next line
 * end are found once and reused until the scan passes them.
 */
export function* oneLineExpressions(text: string): Generator<{ start: number; end: number; inner: string }> {
  let close = -1;
  let lineEnd = -1;
  let position = 0;
  while (position < text.length) {
    const start = text.indexOf('{{', position);
    if (start < 0) return;
    const from = start + 2;
    if (close !== -2 && close < from) {
      const found = text.indexOf('}}', from);
      close = found < 0 ? -2 : found;
    }
    if (close === -2) return;
    if (lineEnd !== -2 && lineEnd < from) {
      lineEnd = -2;
      for (let index = from; index < text.length; index += 1) {
        if (isLineEnd(text.charCodeAt(index))) {
          lineEnd = index;
          break;
        }
      }
    }
    if (lineEnd !== -2 && lineEnd < close) {
      position = start + 1;
      continue;
    }
    yield { start, end: close + 2, inner: text.slice(from, close) };
    position = close + 2;
  }
}

/**
 * goose wraps each `{{ … }}` whose inside does not parse (e.g. `{{ $json.field }}` in an n8n example) in
 * `{% raw %}` so it passes through literally; the same is done here with errand's own expression parser
 * (`parses`), so such recipes keep working. Like goose, only one-line `{{ … }}` are looked at, and
 * plain names and quoted strings are never wrapped. Linear in the text's length (see {@link oneLineExpressions}).
 */
export function protectUnparseable(text: string, parses: (expression: string) => boolean): string {
  const decided = new Map<string, boolean>();
  // Each distinct `{{ … }}` is parsed once, and the text is copied once.
  const parts: string[] = [];
  let copied = 0;
  for (const { start, end, inner } of oneLineExpressions(text)) {
    if (isPlainName(inner)) continue;
    const trimmed = inner.trim();
    if (trimmed.startsWith("'") || trimmed.startsWith('"')) continue;
    let wrap = decided.get(inner);
    if (wrap === undefined) {
      wrap = !parses(inner.replace(/^-/, '').replace(/-$/, ''));
      decided.set(inner, wrap);
    }
    if (!wrap) continue;
    parts.push(text.slice(copied, start), '{% raw %}', text.slice(start, end), '{% endraw %}');
    copied = end;
  }
  if (copied === 0) return text;
  parts.push(text.slice(copied));
  return parts.join('');
}
