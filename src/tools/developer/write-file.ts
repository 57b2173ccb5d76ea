import { z } from 'zod';
import { writeFileMaxChars } from '../../contracts/limits/tools';
import { confinePath, type PathRules } from '../confine-path';
import { defineTool } from '../define-tool';
import { describeRefusal, writeConfined } from '../open-confined';
import { toolError, toolSuccess, type Tool } from '../tool';

const schema = z
  .object({
    path: z.string().min(1).describe('File path, relative to the working directory (or absolute inside it).'),
    content: z.string().max(writeFileMaxChars).describe('The complete new content of the file.'),
  })
  .strict();

/**
 * `write_file`: creates or replaces a file, creating missing parent directories inside the working
 * directory. The file is opened without following a last symlink and checked against the confined path
 * before it is truncated, so a symlink swapped in after the check is refused, never written through.
 */
export function createWriteFileTool(paths: PathRules = {}): Tool {
  return defineTool({
    name: 'write_file',
    description:
      'Create or overwrite a file inside the working directory with the given content. Missing parent directories are created.',
    schema,
    async run(args, context) {
      const confined = await confinePath(context.workingDir, args.path, paths);
      if (!confined.ok) return toolError(confined.message);
      const written = await writeConfined(confined, args.content, context.abortSignal);
      if (!written.ok) return toolError(written.reason === 'directory' ? `"${args.path}" is a directory; give a file path` : describeRefusal(args.path, written.reason));
      const bytes = Buffer.byteLength(args.content, 'utf8');
      return toolSuccess(`${written.created ? 'Created' : 'Overwrote'} ${confined.displayPath} (${bytes} bytes)`);
    },
  });
}

/** `write_file` with no rules beyond the working directory (tests, the plain registry). */
export const writeFileTool: Tool = createWriteFileTool();
