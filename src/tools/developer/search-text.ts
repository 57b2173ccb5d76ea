import { lstat, open, readdir } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import {
  searchTextDefaultMaxMatches,
  searchTextMaxFileBytes,
  searchTextMaxFiles,
  searchTextMaxLineChars,
  searchTextMaxMatchesCeiling,
  toolOutputMaxChars,
} from '../../contracts/limits';
import { confinePath } from '../confine-path';
import { defineTool } from '../define-tool';
import { capOutput } from '../output-cap';
import { toolError, toolSuccess, type Tool } from '../tool';
import { looksBinary } from './looks-binary';

/** Directories never searched: version-control internals and installed dependencies are noise. */
const skippedDirectories = new Set(['.git', '.hg', '.svn', 'node_modules']);

const schema = z
  .object({
    pattern: z.string().min(1).describe('Text to find; a JavaScript regular expression when regex is true.'),
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

/**
 * `search_text`: matching lines under a path, as `file:line: text`. Pure Node (no ripgrep dependency);
 * symlinks are not followed (so the walk cannot leave the working directory or loop), binary files and
 * files over the size limit are skipped, and both matches and visited files are bounded.
 */
export const searchTextTool: Tool = defineTool({
  name: 'search_text',
  description:
    `Search files inside the working directory for lines containing a literal text or matching a regular expression (regex: true). ` +
    `Returns "file:line: text" for each match. Skips .git and node_modules, binary files and files over ${searchTextMaxFileBytes} bytes; ` +
    `does not follow symbolic links.`,
  schema,
  async run(args, context) {
    let matcher: RegExp;
    const flags = args.case_insensitive ? 'i' : '';
    if (args.regex) {
      try {
        matcher = new RegExp(args.pattern, flags);
      } catch (error) {
        return toolError(`argument "pattern" is not a valid regular expression: ${error instanceof Error ? error.message : String(error)}`);
      }
    } else {
      matcher = new RegExp(args.pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), flags);
    }
    const requested = args.path ?? '.';
    const confined = await confinePath(context.workingDir, requested);
    if (!confined.ok) return toolError(confined.message);
    const rootStats = await lstat(confined.absolutePath).catch(() => undefined);
    if (rootStats === undefined) return toolError(`path "${requested}" does not exist`);

    const maxMatches = args.max_matches ?? searchTextDefaultMaxMatches;
    const matches: string[] = [];
    const skipped = { binary: 0, large: 0 };
    let filesVisited = 0;
    let stoppedEarly: string | undefined;
    // The display root is the working directory, so reported paths can be passed straight to read_file.
    const displayRoot = confined.realRoot;

    const searchFile = async (file: string, size: number): Promise<void> => {
      filesVisited += 1;
      if (size > searchTextMaxFileBytes) {
        skipped.large += 1;
        return;
      }
      const handle = await open(file, 'r').catch(() => undefined);
      if (handle === undefined) return;
      let buffer: Buffer;
      try {
        buffer = await handle.readFile();
      } finally {
        await handle.close();
      }
      if (looksBinary(buffer)) {
        skipped.binary += 1;
        return;
      }
      const lines = buffer.toString('utf8').split('\n');
      const display = path.relative(displayRoot, file) || path.basename(file);
      for (let index = 0; index < lines.length && matches.length < maxMatches; index += 1) {
        const line = lines[index] ?? '';
        if (matcher.test(line)) {
          const excerpt = line.length > searchTextMaxLineChars ? `${line.slice(0, searchTextMaxLineChars)}…` : line;
          matches.push(`${display}:${index + 1}: ${excerpt}`);
        }
      }
    };

    if (rootStats.isFile()) {
      await searchFile(confined.absolutePath, rootStats.size);
    } else if (rootStats.isDirectory()) {
      // Iterative depth-first walk with an explicit stack: bounded by searchTextMaxFiles and maxMatches.
      const stack = [confined.absolutePath];
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
        const directory = stack.pop() ?? '';
        const entries = await readdir(directory, { withFileTypes: true }).catch(() => []);
        entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
        const subdirectories: string[] = [];
        for (const entry of entries) {
          const full = path.join(directory, entry.name);
          if (entry.isDirectory()) {
            if (!skippedDirectories.has(entry.name)) subdirectories.push(full);
          } else if (entry.isFile()) {
            if (matches.length >= maxMatches || filesVisited >= searchTextMaxFiles) break;
            const stats = await lstat(full).catch(() => undefined);
            if (stats !== undefined) await searchFile(full, stats.size);
          }
        }
        stack.push(...subdirectories.reverse()); // reversed so they are popped in name order
      }
    } else {
      return toolError(`path "${requested}" is neither a file nor a directory`);
    }

    if (matches.length >= maxMatches && stoppedEarly === undefined) stoppedEarly = `stopped at ${maxMatches} matches (max_matches)`;
    const notes = [
      skipped.binary > 0 ? `${skipped.binary} binary file(s) skipped` : undefined,
      skipped.large > 0 ? `${skipped.large} file(s) over ${searchTextMaxFileBytes} bytes skipped` : undefined,
      stoppedEarly,
    ].filter((note) => note !== undefined);
    const summary = matches.length === 0 ? `No matches for ${JSON.stringify(args.pattern)} in ${confined.displayPath} (${filesVisited} files searched)` : matches.join('\n');
    return toolSuccess(capOutput(notes.length > 0 ? `${summary}\n[${notes.join('; ')}]` : summary, toolOutputMaxChars));
  },
});

