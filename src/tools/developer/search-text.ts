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

/**
 * `search_text`: matching lines under a path, as `file:line: text`. Pure Node (no ripgrep dependency);
 * symlinks are not followed (so the walk cannot leave the working directory or loop), errand's data folder
 * is skipped, binary files and files over the size limit are skipped, and both matches and visited files
 * are bounded. Regular expressions run in RE2 on a worker thread with a deadline (see regex-matcher.ts).
 */
// eslint-disable-next-line max-lines-per-function -- over the limit since before it was set; to be split along its steps
export function createSearchTextTool(paths: PathRules = {}, regexDeadlineMs: number = searchTextRegexDeadlineMs): Tool {
  return defineTool({
    name: 'search_text',
    description:
      `Search files inside the working directory for lines containing a literal text or matching a regular expression (regex: true, RE2 syntax: ` +
      `no lookaround or backreferences). Returns "file:line: text" for each match. Skips .git and node_modules, binary files and files over ` +
      `${searchTextMaxFileBytes} bytes; does not follow symbolic links.`,
    schema,
    // eslint-disable-next-line max-lines-per-function -- the walk and the matching are still one closure; to be split
    async run(args, context) {
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
      const maxMatches = args.max_matches ?? searchTextDefaultMaxMatches;
      const matches: string[] = [];
      const skipped = { binary: 0, large: 0, links: 0 };
      let filesVisited = 0;
      let stoppedEarly: string | undefined;
      // The display root is the working directory, so reported paths can be passed straight to read_file.
      const displayOf = (relative: string) => path.relative(confined.realRoot, path.join(start.root, relative)) || path.basename(relative);

      const searchFile = async (folder: ConfinedDir, name: string): Promise<void> => {
        filesVisited += 1;
        // No symlink is followed and a FIFO does not block; what was opened is what fstat describes.
        const read = await folder.readFile(name, searchTextMaxFileBytes).catch(() => undefined);
        if (read === undefined) return;
        if ('tooLarge' in read) {
          skipped.large += 1;
          return;
        }
        const buffer = read.content;
        if (looksBinary(buffer)) {
          skipped.binary += 1;
          return;
        }
        const text = buffer.toString('utf8');
        const lines = text.split('\n');
        const display = displayOf(folder.relativePath === '.' ? name : `${folder.relativePath}/${name}`);
        for (const index of await match(text, maxMatches - matches.length)) {
          const line = lines[index] ?? '';
          const excerpt = line.length > searchTextMaxLineChars ? `${line.slice(0, searchTextMaxLineChars)}…` : line;
          matches.push(`${display}:${index + 1}: ${excerpt}`);
        }
      };

      try {
        const parent = path.posix.dirname(start.relative);
        const last = path.posix.basename(start.relative);
        const rootKind = start.relative === '' ? 'directory' : await base.openPath(parent === '.' ? '' : parent).then(
          async (folder) => {
            try {
              const info = await folder.lstatChild(last);
              if (info?.isFile()) {
                await searchFile(folder, last);
                return 'file';
              }
              return info?.isDirectory() ? 'directory' : info === undefined ? 'missing' : 'other';
            } finally {
              await folder.close();
            }
          },
          () => 'missing',
        );
        if (rootKind === 'missing') return toolError(`path "${requested}" does not exist`);
        if (rootKind === 'other') return toolError(`path "${requested}" is neither a file nor a directory`);
        if (rootKind === 'directory') {
          // Iterative depth-first walk with an explicit stack of paths below the walk's root: each folder is
          // opened again from the root, step by step, so no handle is held for the folders still to visit.
          const stack = [start.relative];
          while (stack.length > 0) {
            if (context.abortSignal.aborted) return toolError('search_text was cancelled');
            if (matches.length >= maxMatches) {
              stoppedEarly = `stopped at ${maxMatches} matches (max_matches)`;
              break;
            }
            if (filesVisited >= searchTextMaxFiles) {
              stoppedEarly = `stopped after visiting ${searchTextMaxFiles} files; narrow the path`;
              break;
            }
            const relative = stack.pop() ?? '';
            const folder = await base.openPath(relative).catch(() => undefined);
            if (folder === undefined) {
              skipped.links += 1; // swapped for a link (or removed) since it was listed: not followed
              continue;
            }
            try {
              // errand's data folder may sit inside a working directory: it is never searched.
              if (await isDenied(folder)) continue;
              const subdirectories: string[] = [];
              for (const entry of await folder.entries().catch(() => [])) {
                const child = relative === '' ? entry.name : `${relative}/${entry.name}`;
                if (entry.kind === 'directory') {
                  if (!skippedDirectories.has(entry.name) && !confined.denied.some((denied) => isInside(denied, path.join(start.root, child)))) subdirectories.push(child);
                } else if (entry.kind === 'file') {
                  if (matches.length >= maxMatches || filesVisited >= searchTextMaxFiles) break;
                  await searchFile(folder, entry.name);
                } else if (entry.kind === 'link') {
                  skipped.links += 1;
                }
              }
              stack.push(...subdirectories.reverse()); // reversed so they are popped in name order
            } finally {
              await folder.close();
            }
          }
        }
      } catch (error) {
        if (error instanceof RegexCancelledError) return toolError('search_text was cancelled');
        if (!(error instanceof RegexDeadlineError)) throw error;
        const found = matches.length > 0 ? `\n${matches.join('\n')}` : '';
        return toolError(
          `search_text stopped: matching the regular expression took longer than ${error.deadlineMs} ms (after ${filesVisited} files). ` +
            `Use a simpler pattern (fewer nested or counted repetitions), a literal search, or a narrower path.${found}`,
        );
      } finally {
        await threaded?.close();
        await base.close();
      }

      if (matches.length >= maxMatches && stoppedEarly === undefined) stoppedEarly = `stopped at ${maxMatches} matches (max_matches)`;
      const notes = [
        skipped.binary > 0 ? `${skipped.binary} binary file(s) skipped` : undefined,
        skipped.large > 0 ? `${skipped.large} file(s) over ${searchTextMaxFileBytes} bytes skipped` : undefined,
        skipped.links > 0 ? `${skipped.links} symbolic link(s) not followed` : undefined,
        stoppedEarly,
      ].filter((note) => note !== undefined);
      const summary = matches.length === 0 ? `No matches for ${JSON.stringify(args.pattern)} in ${confined.displayPath} (${filesVisited} files searched)` : matches.join('\n');
      return toolSuccess(capOutput(notes.length > 0 ? `${summary}\n[${notes.join('; ')}]` : summary, toolOutputMaxChars));
    },
  });
}

/** `search_text` with no rules beyond the working directory (tests, the plain registry). */
export const searchTextTool: Tool = createSearchTextTool();
