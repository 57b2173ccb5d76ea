import type { HistorySeries } from './figures/history-growth';

/**
 * The history-growth chart as a hand-written SVG (no chart library): bytes added per turn against turn
 * number on a log scale — errand's measured history next to the cost of passing the whole conversation
 * through history — with the 4 KB target and the continue-as-new turns marked.
 */

const width = 820;
const height = 440;
const margin = { left: 76, right: 24, top: 48, bottom: 56 };

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(bytes >= 10 * 1024 * 1024 ? 0 : 1)} MB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(bytes >= 10 * 1024 ? 0 : 1)} KB`;
  return `${bytes} B`;
}

/** Renders the chart. */
export function renderHistoryChart(series: HistorySeries): string {
  const maxTurn = Math.max(1, ...series.turn);
  const positive = [...series.bytes, ...series.wholeConversation].filter((value) => value > 0);
  const low = 10 ** Math.floor(Math.log10(Math.max(1, Math.min(...positive, 1024))));
  const high = 10 ** Math.ceil(Math.log10(Math.max(...positive, 4096)));
  const plotWidth = width - margin.left - margin.right;
  const plotHeight = height - margin.top - margin.bottom;
  const x = (turn: number) => margin.left + ((turn - 1) / Math.max(1, maxTurn - 1)) * plotWidth;
  const y = (bytes: number) => {
    const clamped = Math.min(high, Math.max(low, bytes));
    return margin.top + plotHeight - ((Math.log10(clamped) - Math.log10(low)) / (Math.log10(high) - Math.log10(low))) * plotHeight;
  };
  const path = (values: number[]) =>
    values.map((value, index) => `${index === 0 ? 'M' : 'L'}${x(series.turn[index] ?? index + 1).toFixed(1)},${y(value).toFixed(1)}`).join(' ');

  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`);
  parts.push(`<rect width="${width}" height="${height}" fill="white"/>`);
  parts.push(`<text x="${width / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">History bytes added per turn (continuable subagent, 2 KB messages)</text>`);
  // Horizontal grid: one line per decade.
  for (let decade = low; decade <= high; decade *= 10) {
    parts.push(`<line x1="${margin.left}" x2="${width - margin.right}" y1="${y(decade).toFixed(1)}" y2="${y(decade).toFixed(1)}" stroke="#ddd"/>`);
    parts.push(`<text x="${margin.left - 8}" y="${(y(decade) + 4).toFixed(1)}" text-anchor="end">${formatBytes(decade)}</text>`);
  }
  // Vertical grid every 100 turns (or every tenth of the range).
  const step = maxTurn >= 200 ? 100 : Math.max(1, Math.round(maxTurn / 10));
  for (let turn = step; turn <= maxTurn; turn += step) {
    parts.push(`<line x1="${x(turn).toFixed(1)}" x2="${x(turn).toFixed(1)}" y1="${margin.top}" y2="${margin.top + plotHeight}" stroke="#eee"/>`);
    parts.push(`<text x="${x(turn).toFixed(1)}" y="${margin.top + plotHeight + 18}" text-anchor="middle">${turn}</text>`);
  }
  parts.push(`<text x="${margin.left + plotWidth / 2}" y="${height - 14}" text-anchor="middle">turn</text>`);
  parts.push(`<text transform="translate(16 ${margin.top + plotHeight / 2}) rotate(-90)" text-anchor="middle">bytes added to history by the turn (log scale)</text>`);
  for (const turn of series.continuedAt) {
    parts.push(`<line x1="${x(turn).toFixed(1)}" x2="${x(turn).toFixed(1)}" y1="${margin.top}" y2="${margin.top + plotHeight}" stroke="#999" stroke-dasharray="2 3"/>`);
    parts.push(`<text x="${(x(turn) + 4).toFixed(1)}" y="${margin.top + 12}" fill="#666">continue-as-new</text>`);
  }
  parts.push(`<line x1="${margin.left}" x2="${width - margin.right}" y1="${y(4096).toFixed(1)}" y2="${y(4096).toFixed(1)}" stroke="#c00" stroke-dasharray="6 4"/>`);
  parts.push(`<text x="${width - margin.right - 4}" y="${(y(4096) - 5).toFixed(1)}" text-anchor="end" fill="#c00">target: 4 KB per turn</text>`);
  parts.push(`<path d="${path(series.wholeConversation)}" fill="none" stroke="#e69500" stroke-width="2"/>`);
  parts.push(`<path d="${path(series.bytes)}" fill="none" stroke="#1f5fbf" stroke-width="1.5"/>`);
  parts.push(`<rect x="${margin.left + 10}" y="${margin.top + 20}" width="330" height="44" fill="white" stroke="#ccc"/>`);
  parts.push(`<line x1="${margin.left + 20}" x2="${margin.left + 44}" y1="${margin.top + 34}" y2="${margin.top + 34}" stroke="#1f5fbf" stroke-width="2"/>`);
  parts.push(`<text x="${margin.left + 50}" y="${margin.top + 38}">${escapeXml('errand (measured, all runs)')}</text>`);
  parts.push(`<line x1="${margin.left + 20}" x2="${margin.left + 44}" y1="${margin.top + 54}" y2="${margin.top + 54}" stroke="#e69500" stroke-width="2"/>`);
  parts.push(`<text x="${margin.left + 50}" y="${margin.top + 58}">${escapeXml('whole conversation through history (model input + answer)')}</text>`);
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
