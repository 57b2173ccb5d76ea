import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** A minimal valid recipe file text. */
export function recipeText(description: string, extra = ''): string {
  return `version: 1.0.0\ntitle: ${JSON.stringify(description)}\ndescription: ${JSON.stringify(description)}\ninstructions: Do the ${description} work.\n${extra}`;
}

/** A minimal valid agent file text. */
export function agentText(name: string, description: string, body = 'You help.'): string {
  return `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`;
}

/** Writes files (paths relative to `root`), creating folders. */
export function writeFiles(root: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    const full = join(root, path);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, content);
  }
}
