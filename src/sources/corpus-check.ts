import { basename, relative } from 'node:path';
import { checkFile, collectFiles, type RecipeCheckReport } from './recipes-check-command';

/**
 * Checks a corpus of recipe and agent files that errand did not write (for instance files taken from
 * goose's repository): every file the original tool accepts must load here. Files the original tool
 * itself refuses are listed with the reason and must fail here too, so the list stays true.
 */

/** The outcome for one corpus file. */
export interface CorpusFileOutcome {
  /** Path relative to the corpus folder. */
  file: string;
  /** `ok`: loads; `refused-as-expected`: fails, as the original tool refuses it; the others are problems. */
  outcome: 'ok' | 'refused-as-expected' | 'failed' | 'loads-but-expected-refused';
  report: RecipeCheckReport;
  /** Why the original tool refuses it, for files on the refused list. */
  reason?: string;
}

/** The corpus check's result. */
export interface CorpusCheckResult {
  files: CorpusFileOutcome[];
  /** Refused-list entries that name no file of the corpus (the list is out of date). */
  missing: string[];
  /** True when every file came out as expected. */
  ok: boolean;
}

/**
 * Checks every recipe (`.yaml`, `.yml`, `.json`) and agent (`.md`) file under `folder`, except
 * `README.md` files (a folder's own documentation). `refused` maps paths relative to `folder` to the
 * reason the original tool refuses the file.
 */
export async function checkCorpus(folder: string, refused: Readonly<Record<string, string>>): Promise<CorpusCheckResult> {
  const paths = (await collectFiles(folder)).filter((path) => basename(path).toLowerCase() !== 'readme.md');
  const files: CorpusFileOutcome[] = [];
  for (const path of paths) {
    const file = relative(folder, path).split('\\').join('/');
    const report = await checkFile(path);
    const reason = refused[file];
    let outcome: CorpusFileOutcome['outcome'];
    if (reason === undefined) outcome = report.ok ? 'ok' : 'failed';
    else outcome = report.ok ? 'loads-but-expected-refused' : 'refused-as-expected';
    files.push({ file, outcome, report, ...(reason === undefined ? {} : { reason }) });
  }
  const known = new Set(files.map((entry) => entry.file));
  const missing = Object.keys(refused).filter((file) => !known.has(file));
  const ok = files.length > 0 && missing.length === 0 && files.every((entry) => entry.outcome === 'ok' || entry.outcome === 'refused-as-expected');
  return { files, missing, ok };
}

/** The check's report for people: each problem, then a one-line summary. */
export function formatCorpusResult(folder: string, result: CorpusCheckResult): string {
  const lines: string[] = [];
  for (const entry of result.files) {
    if (entry.outcome === 'failed') {
      lines.push(`FAIL ${entry.file}: the original tool accepts it, errand does not`);
      for (const error of entry.report.errors) lines.push(`  error: ${error}`);
    } else if (entry.outcome === 'loads-but-expected-refused') {
      lines.push(`FAIL ${entry.file}: loads, but it is listed as refused by the original tool (${entry.reason ?? ''}); update the list`);
    }
  }
  for (const file of result.missing) lines.push(`FAIL ${file}: listed as refused by the original tool, but not in the corpus; update the list`);
  const count = (outcome: CorpusFileOutcome['outcome']) => result.files.filter((entry) => entry.outcome === outcome).length;
  const problems = count('failed') + count('loads-but-expected-refused') + result.missing.length;
  if (result.files.length === 0) lines.push(`no recipe or agent files found under ${folder}`);
  lines.push(`corpus ${folder}: ${result.files.length} file(s): ${count('ok')} load, ${count('refused-as-expected')} refused as the original tool refuses them, ${problems} problem(s)`);
  return `${lines.join('\n')}\n`;
}
