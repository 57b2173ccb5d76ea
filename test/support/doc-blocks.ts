import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { shellWords } from './mcp-client-entries';

/**
 * The fenced blocks of README.md and docs/*.md, with where they are and the marker comment right above them.
 * The docs are tests: a block a user would copy (a command, a configuration, an environment) is either read
 * from here by the test that runs it, or says why it cannot run here:
 *
 *     <!-- mcp-goose-http: test/docs/doc-stack-blocks.test.ts connects to a real errand dev with this entry -->
 *     <!-- not run: deploys to a real AWS account -->
 *
 * The first form is an id and the test file that reads the block by that id (`docBlock('mcp-goose-http')`);
 * test/docs/doc-blocks.test.ts checks every block has one of the two and that the named test reads it.
 */

export const projectRoot = resolve(__dirname, '..', '..');

/** Languages of blocks a user copies and runs or pastes into a configuration: each needs a marker. */
export const copiedLanguages: ReadonlySet<string> = new Set(['sh', 'bash', 'shell', 'console', 'json', 'jsonc', 'yaml', 'yml', 'toml', 'env', 'dotenv', 'ini']);

/** What the comment right above a block says about it. */
export type DocBlockMarker = { kind: 'runs'; id: string; testFile: string; says: string } | { kind: 'not-run'; reason: string };

/** One fenced block. */
export interface DocBlock {
  /** Relative to the project root, e.g. `docs/mcp.md`. */
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The fence's info string's first word (`sh`, `json`, ...), or '' for a bare fence. */
  language: string;
  /** The block's text between the fences, ending with a newline. */
  text: string;
  marker?: DocBlockMarker;
}

/** The documents whose blocks are tests: README.md and docs/*.md (not the decisions, which record history). */
export function documentFiles(): string[] {
  const docs = readdirSync(join(projectRoot, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

const runsMarker = /^<!--\s*([a-z0-9][a-z0-9-]*):\s*(test\/\S+\.test\.ts)\s+(.+?)\s*-->$/;
const notRunMarker = /^<!--\s*not run:\s*(.+?)\s*-->$/;

function markerFrom(line: string | undefined): DocBlockMarker | undefined {
  if (line === undefined) return undefined;
  const trimmed = line.trim();
  const notRun = notRunMarker.exec(trimmed);
  if (notRun?.[1]) return { kind: 'not-run', reason: notRun[1] };
  const runs = runsMarker.exec(trimmed);
  if (runs?.[1] && runs[2] && runs[3]) return { kind: 'runs', id: runs[1], testFile: runs[2], says: runs[3] };
  return undefined;
}

/** The fenced blocks of one document, in order. */
export function blocksOf(file: string): DocBlock[] {
  const lines = readFileSync(join(projectRoot, file), 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const open = /^```(\S*)/.exec(lines[index] ?? '');
    if (!open) continue;
    const start = index;
    const body: string[] = [];
    index += 1;
    while (index < lines.length && !/^```\s*$/.test(lines[index] ?? '')) {
      body.push(lines[index] ?? '');
      index += 1;
    }
    if (index >= lines.length) throw new Error(`${file}:${start + 1}: a fenced block is never closed`);
    // The marker is the line right above the fence (no blank line between, so it cannot drift to another block).
    const marker = markerFrom(lines[start - 1]);
    blocks.push({ file, line: start + 1, language: (open[1] ?? '').toLowerCase(), text: `${body.join('\n')}\n`, ...(marker ? { marker } : {}) });
  }
  return blocks;
}

/** Every fenced block of README.md and docs/*.md. */
export function allDocBlocks(): DocBlock[] {
  return documentFiles().flatMap(blocksOf);
}

/** The block whose marker has this id (the test that runs it reads it here, never a copy of it). */
export function docBlock(id: string): DocBlock {
  const found = allDocBlocks().filter((block) => block.marker?.kind === 'runs' && block.marker.id === id);
  if (found.length !== 1) throw new Error(`expected one doc block marked "${id}", found ${found.length}`);
  return found[0] as DocBlock;
}

/**
 * A block's text with its placeholders filled in. Each placeholder must occur in the block: when the docs
 * change one, the test that fills it fails instead of running a block that no longer says what it tested.
 */
export function fillPlaceholders(block: DocBlock, values: ReadonlyArray<readonly [string | RegExp, string]>): string {
  let text = block.text;
  for (const [placeholder, value] of values) {
    const present = typeof placeholder === 'string' ? text.includes(placeholder) : new RegExp(placeholder.source, placeholder.flags.replace('g', '')).test(text);
    if (!present) throw new Error(`${block.file}:${block.line}: the block no longer contains ${String(placeholder)}`);
    text = typeof placeholder === 'string' ? text.split(placeholder).join(value) : text.replace(new RegExp(placeholder.source, placeholder.flags.includes('g') ? placeholder.flags : `${placeholder.flags}g`), value);
  }
  return text;
}

/**
 * The commands of a shell block: comment lines dropped, `\` continuations joined, trailing comments kept
 * (the shell ignores them).
 */
export function shellCommands(text: string): string[] {
  const commands: string[] = [];
  let current = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (current === '' && (line.trim() === '' || line.trim().startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1).trim()} `;
      continue;
    }
    commands.push(`${current}${line.trim()}`);
    current = '';
  }
  if (current !== '') commands.push(current.trim());
  return commands;
}

/**
 * What is wrong with the docs' blocks as tests: a copied block with no marker, a marker naming a test file
 * that does not exist or does not read the block by its id, an id used twice.
 */
export function docBlockProblems(blocks: readonly DocBlock[], readTestFile: (path: string) => string | undefined): string[] {
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const block of blocks) {
    const where = `${block.file}:${block.line}`;
    const marker = block.marker;
    if (!marker) {
      if (copiedLanguages.has(block.language)) problems.push(`${where}: a \`${block.language}\` block with no marker above it: name the test that runs it (<!-- id: test/….test.ts … -->) or say why it cannot run (<!-- not run: … -->)`);
      continue;
    }
    if (marker.kind === 'not-run') continue;
    const earlier = seen.get(marker.id);
    if (earlier) problems.push(`${where}: the id "${marker.id}" is already used at ${earlier}`);
    seen.set(marker.id, where);
    const source = readTestFile(marker.testFile);
    if (source === undefined) problems.push(`${where}: the marker names ${marker.testFile}, which does not exist`);
    // The test reads the block by its id (docBlock('id'), or the id in a list it reads with docBlock).
    else if (!source.includes('docBlock(') || !source.includes(`'${marker.id}'`)) problems.push(`${where}: ${marker.testFile} does not read this block (no docBlock('${marker.id}') in it)`);
  }
  return problems;
}

/**
 * The variables a shell or env block sets (`NAME=value` or `export NAME=value`, quotes and trailing
 * comments as sh reads them), and its other commands in order.
 */
export function shellAssignments(text: string, env: NodeJS.ProcessEnv = {}): { env: Record<string, string>; commands: string[] } {
  const assigned: Record<string, string> = {};
  const commands: string[] = [];
  for (const command of shellCommands(text)) {
    const words = shellWords(command, { ...env, ...assigned });
    const rest = words[0] === 'export' ? words.slice(1) : words;
    const pairs = rest.map((word) => /^([A-Za-z_][A-Za-z0-9_]*)=([\s\S]*)$/.exec(word));
    if (rest.length > 0 && pairs.every((pair) => pair !== null)) {
      for (const pair of pairs) if (pair?.[1]) assigned[pair[1]] = pair[2] ?? '';
    } else commands.push(command);
  }
  return { env: assigned, commands };
}

let sourceText: string | undefined;

function typeScriptUnder(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return typeScriptUnder(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/**
 * Whether a variable a doc sets is one something reads: an `ERRAND_` setting that src/ names, or an
 * `OTEL_` variable the OpenTelemetry SDK knows (its environment list in @opentelemetry/core). A misspelt
 * setting would be ignored without a word at run time; here it fails.
 */
export function isKnownSetting(name: string): boolean {
  sourceText ??= typeScriptUnder(join(projectRoot, 'src'))
    .map((file) => readFileSync(file, 'utf8'))
    .join('\n');
  const named = new RegExp(`(?<![A-Za-z0-9_])${name}(?![A-Za-z0-9_])`);
  if (name.startsWith('OTEL_')) {
    const sdkEnvironment = readFileSync(join(projectRoot, 'node_modules', '@opentelemetry', 'core', 'build', 'src', 'utils', 'environment.js'), 'utf8');
    return named.test(sdkEnvironment) || named.test(sourceText);
  }
  return name.startsWith('ERRAND_') && named.test(sourceText);
}
