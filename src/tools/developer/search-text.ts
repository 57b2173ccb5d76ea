import path from 'node:path';
import { z } from 'zod';
import {
  searchTextDefaultMaxMatches,
  searchTextMaxFileBytes,
  searchTextMaxFiles,
  searchTextMaxLineChars,
  searchTextMaxMatchesCeiling,
  searchTextMaxPatternChars,
  searchTextRegexDeadlineMs,
  toolOutputMaxChars,
} from '../../contracts/limits/tools';
import { confinePath, isInside, type PathRules } from '../confine-path';
import { ConfinedDir, folderIdentities, walkStart } from '../confined-dir';
import { defineTool } from '../define-tool';
import { capOutput } from '../output-cap';
import { toolError, toolSuccess, type Tool } from '../tool';
import { looksBinary } from './looks-binary';
import { checkRegex, RegexCancelledError, RegexDeadlineError, ThreadedRegexMatcher } from './regex-matcher';

/** Directories never searched: version-control internals and installed dependencies are noise. */
const skippedDirectories = new Set(['.git', '.hg', '.svn', 'node_modules']);

const schema = z
  .object({
    pattern: z
      .string()
      .min(1)
      .max(searchTextMaxPatternChars)
      .describe('Text to find; a regular expression in RE2 syntax when regex is true (like JavaScript regular expressions, without lookaround or backreferences).'),
    path: z.string().optional().describe('File or directory to search, relative to the working directory (default ".").'),
    regex: z.boolean().optional().describe('Treat pattern as a regular expression (default false: literal text).'),
    case_insensitive: z.boolean().optional().describe('Ignore case (default false).'),
    max_matches: z
      .number()
      .int()
      .min(1)
      .max(searchTextMaxMatchesCeiling)
      .optional()
      .describe(`Most matching lines to return (default ${searchTextDefaultMaxMatches}).`),
  })
  .strict();

/** Finds the matching line indexes of one file's text. */
type LineMatcher = (text: string, max: number) => Promise<number[]>;

/** Literal text: plain substring search on the event loop (linear, nothing to guard). */
function literalMatcher(pattern: string, caseInsensitive: boolean): LineMatcher {
  const needle = caseInsensitive ? pattern.toLowerCase() : pattern;
  return (text, max) => {
    const found: number[] = [];
    const lines = text.split('\n');
    for (let index = 0; index < lines.length && found.length < max; index += 1) {
      const line = lines[index] ?? '';
      if ((caseInsensitive ? line.toLowerCase() : line).includes(needle)) found.push(index);
    }
    return Promise.resolve(found);
  };
}

/** Where a search runs: the walk's base folder and start, what is denied, and how paths are shown. */
interface SearchPlace {
  base: ConfinedDir;
  start: { root: string; relative: string };
  denied: readonly string[];
  isDenied: (folder: ConfinedDir) => Promise<boolean>;
  /** The path shown for a path below the walk's root (relative to the working directory). */
  displayOf: (relative: string) => string;
}

/** One search: what it found, what it skipped and why it stopped early. */
class TextSearch {
  readonly matches: string[] = [];
  readonly skipped = { binary: 0, large: 0, links: 0 };
  filesVisited = 0;
  stoppedEarly: string | undefined;

  constructor(
    private readonly place: SearchPlace,
    private readonly match: LineMatcher,
    readonly maxMatches: number,
    private readonly abortSignal: AbortSignal,
  ) {}

  private get full(): boolean {
    return this.matches.length >= this.maxMatches || this.filesVisited >= searchTextMaxFiles;
  }

  /** Searches the file `name` of `folder`. */
  async searchFile(folder: ConfinedDir, name: string): Promise<void> {
    this.filesVisited += 1;
    // No symlink is followed and a FIFO does not block; what was opened is what fstat describes.
    const read = await folder.readFile(name, searchTextMaxFileBytes).catch(() => undefined);
    if (read === undefined) return;
    if ('tooLarge' in read) {
      this.skipped.large += 1;
      return;
    }
    const buffer = read.content;
    if (looksBinary(buffer)) {
      this.skipped.binary += 1;
      return;
    }
    const text = buffer.toString('utf8');
    const lines = text.split('\n');
    const display = this.place.displayOf(folder.relativePath === '.' ? name : `${folder.relativePath}/${name}`);
    for (const index of await this.match(text, this.maxMatches - this.matches.length)) {
      const line = lines[index] ?? '';
      const excerpt = line.length > searchTextMaxLineChars ? `${line.slice(0, searchTextMaxLineChars)}…` : line;
      this.matches.push(`${display}:${index + 1}: ${excerpt}`);
    }
  }

  /** What the walk's start is; a file is searched at once. */
  async searchStart(): Promise<'file' | 'directory' | 'missing' | 'other'> {
    const { base, start } = this.place;
    if (start.relative === '') return 'directory';
    const parent = path.posix.dirname(start.relative);
    const last = path.posix.basename(start.relative);
    return base.openPath(parent === '.' ? '' : parent).then(
      async (folder) => {
        try {
          const info = await folder.lstatChild(last);
          if (info?.isFile()) {
            await this.searchFile(folder, last);
            return 'file';
          }
          return info?.isDirectory() ? 'directory' : info === undefined ? 'missing' : 'other';
        } finally {
          await folder.close();
        }
      },
      () => 'missing' as const,
    );
  }

  /**
   * Iterative depth-first walk with an explicit stack of paths below the walk's root: each folder is opened
   * again from the root, step by step, so no handle is held for the folders still to visit. Returns false
   * when the call was cancelled.
   */
  async walk(): Promise<boolean> {
    const { base, start } = this.place;
    const stack = [start.relative];
    while (stack.length > 0) {
      if (this.abortSignal.aborted) return false;
      if (this.matches.length >= this.maxMatches) {
        this.stoppedEarly = `stopped at ${this.maxMatches} matches (max_matches)`;
        break;
      }
      if (this.filesVisited >= searchTextMaxFiles) {
        this.stoppedEarly = `stopped after visiting ${searchTextMaxFiles} files; narrow the path`;
        break;
      }
      const relative = stack.pop() ?? '';
      const folder = await base.openPath(relative).catch(() => undefined);
      if (folder === undefined) {
        this.skipped.links += 1; // swapped for a link (or removed) since it was listed: not followed
        continue;
      }
      try {
        // errand's data folder may sit inside a working directory: it is never searched.
        if (!(await this.place.isDenied(folder))) stack.push(...(await this.visit(folder, relative)).reverse()); // reversed so they are popped in name order
      } finally {
        await folder.close();
      }
    }
    return true;
  }

  /** Searches a folder's files and returns its subfolders to visit. */
  private async visit(folder: ConfinedDir, relative: string): Promise<string[]> {
    const subdirectories: string[] = [];
    for (const entry of await folder.entries().catch(() => [])) {
      const child = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.kind === 'directory') {
        if (!skippedDirectories.has(entry.name) && !this.place.denied.some((denied) => isInside(denied, path.join(this.place.start.root, child)))) subdirectories.push(child);
      } else if (entry.kind === 'file') {
        if (this.full) break;
        await this.searchFile(folder, entry.name);
      } else if (entry.kind === 'link') {
        this.skipped.links += 1;
      }
    }
    return subdirectories;
  }

  /** The notes after the matches: what was skipped, and why the search stopped early. */
  notes(): string[] {
    if (this.matches.length >= this.maxMatches && this.stoppedEarly === undefined) this.stoppedEarly = `stopped at ${this.maxMatches} matches (max_matches)`;
    return [
      this.skipped.binary > 0 ? `${this.skipped.binary} binary file(s) skipped` : undefined,
      this.skipped.large > 0 ? `${this.skipped.large} file(s) over ${searchTextMaxFileBytes} bytes skipped` : undefined,
      this.skipped.links > 0 ? `${this.skipped.links} symbolic link(s) not followed` : undefined,
      this.stoppedEarly,
    ].filter((note) => note !== undefined);
  }
}

type SearchArgs = z.infer<typeof schema>;

/** Runs one `search_text` call. */
async function searchText(args: SearchArgs, context: { workingDir: string; abortSignal: AbortSignal }, paths: PathRules, regexDeadlineMs: number) {
  const caseInsensitive = args.case_insensitive ?? false;
  if (args.regex) {
    const checked = checkRegex(args.pattern, caseInsensitive);
    if (!checked.ok) return toolError(`argument "pattern" is not a valid regular expression (RE2 syntax): ${checked.message}`);
  }
  const requested = args.path ?? '.';
  const confined = await confinePath(context.workingDir, requested, paths);
  if (!confined.ok) return toolError(confined.message);
  // Every step from the working root down is taken relative to an opened folder, never through a link
  // (src/tools/confined-dir.ts): a folder swapped for a symlink during the walk is refused, not followed.
  const start = await walkStart(confined.absolutePath, confined.realRoot, paths.workingRoot);
  const deniedFolders = await folderIdentities(confined.denied);
  const isDenied = async (folder: ConfinedDir) => {
    if (deniedFolders.length === 0) return false;
    const own = await folder.identity();
    return deniedFolders.some((identity) => identity.dev === own.dev && identity.ino === own.ino);
  };
  const base = await ConfinedDir.openRoot(start.root).catch(() => undefined);
  if (base === undefined) return toolError(`path "${requested}" does not exist`);

  const threaded = args.regex ? new ThreadedRegexMatcher(args.pattern, caseInsensitive, regexDeadlineMs, context.abortSignal) : undefined;
  const match: LineMatcher = threaded ? (text, max) => threaded.matchLines(text, max) : literalMatcher(args.pattern, caseInsensitive);
  // The display root is the working directory, so reported paths can be passed straight to read_file.
  const displayOf = (relative: string) => path.relative(confined.realRoot, path.join(start.root, relative)) || path.basename(relative);
  const search = new TextSearch({ base, start, denied: confined.denied, isDenied, displayOf }, match, args.max_matches ?? searchTextDefaultMaxMatches, context.abortSignal);
  try {
    const rootKind = await search.searchStart();
    if (rootKind === 'missing') return toolError(`path "${requested}" does not exist`);
    if (rootKind === 'other') return toolError(`path "${requested}" is neither a file nor a directory`);
    if (rootKind === 'directory' && !(await search.walk())) return toolError('search_text was cancelled');
  } catch (error) {
    if (error instanceof RegexCancelledError) return toolError('search_text was cancelled');
    if (!(error instanceof RegexDeadlineError)) throw error;
    const found = search.matches.length > 0 ? `\n${search.matches.join('\n')}` : '';
    return toolError(
      `search_text stopped: matching the regular expression took longer than ${error.deadlineMs} ms (after ${search.filesVisited} files). ` +
        `Use a simpler pattern (fewer nested or counted repetitions), a literal search, or a narrower path.${found}`,
    );
  } finally {
    await threaded?.close();
    await base.close();
  }
  const notes = search.notes();
  const summary = search.matches.length === 0 ? `No matches for ${JSON.stringify(args.pattern)} in ${confined.displayPath} (${search.filesVisited} files searched)` : search.matches.join('\n');
  return toolSuccess(capOutput(notes.length > 0 ? `${summary}\n[${notes.join('; ')}]` : summary, toolOutputMaxChars));
}

/**
 * `search_text`: matching lines under a path, as `file:line: text`. Pure Node (no ripgrep dependency);
 * symlinks are not followed (so the walk cannot leave the working directory or loop), errand's data folder
 * is skipped, binary files and files over the size limit are skipped, and both matches and visited files
 * are bounded. Regular expressions run in RE2 on a worker thread with a deadline (see regex-matcher.ts).
 */
export function createSearchTextTool(paths: PathRules = {}, regexDeadlineMs: number = searchTextRegexDeadlineMs): Tool {
  return defineTool({
    name: 'search_text',
    description:
      `Search files inside the working directory for lines containing a literal text or matching a regular expression (regex: true, RE2 syntax: ` +
      `no lookaround or backreferences). Returns "file:line: text" for each match. Skips .git and node_modules, binary files and files over ` +
      `${searchTextMaxFileBytes} bytes; does not follow symbolic links.`,
    schema,
    run: (args, context) => searchText(args, context, paths, regexDeadlineMs),
  });
}

/** `search_text` with no rules beyond the working directory (tests, the plain registry). */
export const searchTextTool: Tool = createSearchTextTool();
