import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { writeFileMaxChars } from '../../contracts/limits';
import { confinePath } from '../confine-path';
import { defineTool } from '../define-tool';
import { toolError, toolSuccess, type Tool } from '../tool';

const schema = z
  .object({
    path: z.string().min(1).describe('File path, relative to the working directory (or absolute inside it).'),
    content: z.string().max(writeFileMaxChars).describe('The complete new content of the file.'),
  })
  .strict();

/** `write_file`: creates or replaces a file, creating missing parent directories inside the working directory. */
export const writeFileTool: Tool = defineTool({
  name: 'write_file',
  description:
    'Create or overwrite a file inside the working directory with the given content. Missing parent directories are created.',
  schema,
  async run(args, context) {
    const confined = await confinePath(context.workingDir, args.path);
    if (!confined.ok) return toolError(confined.message);
    const existing = await stat(confined.absolutePath).catch(() => undefined);
    if (existing?.isDirectory()) return toolError(`"${args.path}" is a directory; give a file path`);
    // The confined path has its symlinks resolved, so creating its parents cannot step outside the root.
    await mkdir(path.dirname(confined.absolutePath), { recursive: true });
    await writeFile(confined.absolutePath, args.content, { encoding: 'utf8', signal: context.abortSignal });
    const bytes = Buffer.byteLength(args.content, 'utf8');
    return toolSuccess(`${existing ? 'Overwrote' : 'Created'} ${confined.displayPath} (${bytes} bytes)`);
  },
});
