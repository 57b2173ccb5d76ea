/**
 * The script as Claude Code's runtime reads it: a body wrapped in an async function (top-level `await` and
 * `return`), with an optional `export const meta = {...}` header. errand keeps every line where it was, so
 * a diagnostic names the author's line number.
 */
import type { WorkflowScriptDiagnostic } from '../contracts/workflow-script.js';

/** The file name the engine gives the script; stack traces name it with the line. */
export const scriptFileName = 'workflow.js';

export type PreparedScript = { ok: true; source: string } | { ok: false; diagnostic: WorkflowScriptDiagnostic };

/** Longest script accepted (characters): scripts are orchestration, not data. */
const maxScriptChars = 1_048_576;

/**
 * The script ready to wrap: `export const meta` becomes `const meta` (same line, same columns but one
 * word), and module syntax the runtime does not have is refused naming it and its line.
 */
export function prepareScriptSource(script: string): PreparedScript {
  if (script.length > maxScriptChars) {
    return { ok: false, diagnostic: { kind: 'error', message: `the script is ${script.length} characters, more than ${maxScriptChars}`, line: null } };
  }
  const lines = script.split('\n');
  const out: string[] = [];
  for (const [index, line] of lines.entries()) {
    if (/^\s*export\s+const\s+meta\b/.test(line)) {
      out.push(line.replace(/export\s+/, ''));
      continue;
    }
    if (/^\s*import\s*(?:[\w${*]|["'])/.test(line)) {
      return { ok: false, diagnostic: { kind: 'unsupported', message: 'import declarations are not supported in a workflow script: it has no modules', line: index + 1 } };
    }
    if (/^\s*export\b/.test(line)) {
      return { ok: false, diagnostic: { kind: 'unsupported', message: 'export is not supported in a workflow script (only `export const meta`)', line: index + 1 } };
    }
    out.push(line);
  }
  return { ok: true, source: out.join('\n') };
}
