import { z } from 'zod';
import { readFileMaxBytes, toolOutputMaxChars } from '../../contracts/limits/tools';
import { confinePath, type PathRules } from '../confine-path';
import { defineTool } from '../define-tool';
import { describeRefusal, readConfined } from '../open-confined';
import { capOutput } from '../output-cap';
import { toolError, toolSuccess, type Tool } from '../tool';
import { looksBinary } from './looks-binary';

const schema = z
  .object({
    path: z.string().describe('File path, relative to the working directory (or absolute inside it).'),
    start_line: z.number().int().min(1).optional().describe('First line to return, 1-based (default 1).'),
    end_line: z.number().int().min(1).optional().describe('Last line to return, inclusive (default: end of file).'),
  })
  .strict();

/**
 * `read_file`: a text file's content, optionally a line range, capped in size. The file is opened without
 * following a last symlink, checked against the confined path, and read up to the limit only.
 */
export function createReadFileTool(paths: PathRules = {}): Tool {
  return defineTool({
    name: 'read_file',
    description:
      `Read a text file inside the working directory. Optionally give start_line/end_line (1-based, inclusive) ` +
      `for a range; with a range, lines are prefixed with their numbers. Output is capped at ${toolOutputMaxChars} characters.`,
    schema,
    async run(args, context) {
      if (args.start_line !== undefined && args.end_line !== undefined && args.end_line < args.start_line) {
        return toolError(`Invalid arguments for read_file: end_line (${args.end_line}) is before start_line (${args.start_line}).`);
      }
      const confined = await confinePath(context.workingDir, args.path, paths);
      if (!confined.ok) return toolError(confined.message);
      const read = await readConfined(confined, readFileMaxBytes);
      if (!read.ok) {
        if (read.reason === 'too-large') {
          return toolError(`file "${args.path}" is ${read.size} bytes, over the ${readFileMaxBytes}-byte limit of read_file; use search_text or run_command (head, sed -n) to read parts of it`);
        }
        if (read.reason === 'directory') return toolError(`"${args.path}" is a directory; use list_directory to see its entries`);
        return toolError(describeRefusal(args.path, read.reason));
      }
      const buffer = read.content;
      if (looksBinary(buffer)) return toolError(`file "${args.path}" looks binary (${buffer.length} bytes); read_file returns text only`);
      const text = buffer.toString('utf8');
      if (args.start_line === undefined && args.end_line === undefined) {
        return toolSuccess(capOutput(text, toolOutputMaxChars, 'pass start_line/end_line to read the rest'));
      }
      const lines = text.split('\n');
      if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
      const start = args.start_line ?? 1;
      const end = Math.min(args.end_line ?? lines.length, lines.length);
      if (start > lines.length) {
        return toolError(`start_line ${start} is past the end of "${args.path}", which has ${lines.length} lines`);
      }
      const numbered = lines.slice(start - 1, end).map((line, index) => `${start + index}: ${line}`);
      const header = `${confined.displayPath}: lines ${start}-${end} of ${lines.length}\n`;
      return toolSuccess(capOutput(header + numbered.join('\n'), toolOutputMaxChars, 'ask for a smaller line range'));
    },
  });
}

/** `read_file` with no rules beyond the working directory (tests, the plain registry). */
export const readFileTool: Tool = createReadFileTool();
