import { maxNameSuggestions } from '../contracts/limits/sources';

/**
 * Up to `limit` known names close to `query`: names containing the query (or contained in it),
 * case-insensitively, first; then names within an edit distance that scales with the length, so a
 * transposition like `dpeloy` still finds `deploy` (goose matches substrings only and finds nothing).
 */
export function suggestNames(query: string, names: readonly string[], limit: number = maxNameSuggestions): string[] {
  const needle = query.toLowerCase();
  if (needle === '') return [];
  const scored: { name: string; score: number }[] = [];
  for (const name of new Set(names)) {
    const candidate = name.toLowerCase();
    if (candidate === needle) continue;
    if (candidate.includes(needle) || needle.includes(candidate)) {
      scored.push({ name, score: Math.abs(candidate.length - needle.length) / 100 });
      continue;
    }
    const distance = editDistance(needle, candidate);
    const allowed = Math.max(1, Math.floor(Math.max(needle.length, candidate.length) / 3));
    if (distance <= allowed) scored.push({ name, score: 1 + distance });
  }
  scored.sort((a, b) => a.score - b.score || a.name.localeCompare(b.name));
  return scored.slice(0, limit).map((entry) => entry.name);
}

/** Optimal string alignment distance: Levenshtein plus adjacent transpositions counted as one edit. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  const at = (i: number, j: number): number => d[i]?.[j] ?? Number.POSITIVE_INFINITY;
  for (let i = 1; i < rows; i += 1) {
    for (let j = 1; j < cols; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      const row = d[i];
      if (row) row[j] = best;
    }
  }
  return at(a.length, b.length);
}
