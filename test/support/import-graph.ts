import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/**
 * The import graph of errand's sources, as the TypeScript compiler reads a file's imports: static imports,
 * `export ... from`, type-only imports, `import()` and `require()` (a type-only import is still an arrow a
 * reader follows). Only relative specifiers count: packages are outside the house.
 */
export interface ImportGraph {
  /** Source files, relative to the root with `/` separators (`src/api/app.ts`). */
  files: string[];
  /** For each file, the files it imports (relative, as in `files`). */
  imports: Map<string, string[]>;
}

function typeScriptFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return typeScriptFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The source file a relative specifier names (`./x`, `./x.js`, `./folder` with an index.ts), if any. */
function resolveSpecifier(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  for (const candidate of [`${base}.ts`, base.replace(/\.js$/, '.ts'), join(base, 'index.ts')]) {
    if (candidate.endsWith('.ts') && existsSync(candidate)) return candidate;
  }
  return undefined;
}

const posix = (path: string): string => path.split(sep).join('/');

/** Reads the import graph of every `.ts` file under `root/folder`. */
export function importGraph(root: string, folder = 'src'): ImportGraph {
  const absolute = typeScriptFiles(join(root, folder)).sort();
  const imports = new Map<string, string[]>();
  for (const file of absolute) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = new Set<string>();
    for (const imported of info.importedFiles) {
      if (!imported.fileName.startsWith('.')) continue;
      const target = resolveSpecifier(file, imported.fileName);
      if (target !== undefined) targets.add(posix(relative(root, target)));
    }
    imports.set(posix(relative(root, file)), [...targets].sort());
  }
  return { files: absolute.map((file) => posix(relative(root, file))), imports };
}

/** The room of a source file: its first folder under src/ (`api`), or the file itself for a loose module (`cli.ts`). */
export function roomOf(file: string): string {
  const parts = file.split('/');
  return parts[1] ?? file;
}

/**
 * The strongly connected components with more than one member (or a file that imports itself): each is a
 * cycle of imports. Tarjan's algorithm, iterative so a deep chain cannot overflow the stack.
 */
export function importCycles(nodes: string[], edges: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let next = 0;
  for (const start of nodes) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; child: number }> = [{ node: start, child: 0 }];
    index.set(start, next);
    low.set(start, next);
    next += 1;
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const children = edges.get(frame.node) ?? [];
      if (frame.child < children.length) {
        const child = children[frame.child]!;
        frame.child += 1;
        if (!index.has(child)) {
          index.set(child, next);
          low.set(child, next);
          next += 1;
          stack.push(child);
          onStack.add(child);
          work.push({ node: child, child: 0 });
        } else if (onStack.has(child)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(child)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
          onStack.delete(member);
          component.push(member);
          if (member === frame.node) break;
        }
        if (component.length > 1 || (edges.get(frame.node) ?? []).includes(frame.node)) cycles.push(component.sort());
      }
    }
  }
  return cycles;
}

/** The arrows between rooms: `from → to` with one importing file and one imported file as an example. */
export function roomArrows(graph: ImportGraph): Map<string, { from: string; to: string; example: string }> {
  const arrows = new Map<string, { from: string; to: string; example: string }>();
  for (const [file, targets] of graph.imports) {
    for (const target of targets) {
      const from = roomOf(file);
      const to = roomOf(target);
      const key = `${from} → ${to}`;
      if (from !== to && !arrows.has(key)) arrows.set(key, { from, to, example: `${file} imports ${target}` });
    }
  }
  return arrows;
}
