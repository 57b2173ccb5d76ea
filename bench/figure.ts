/** One measured figure, as written to results.json (`baseline` / `ratio` only where a bare-Temporal baseline applies). */
export interface FigureResult {
  id: string;
  description: string;
  /** The figure (a median or a percentile); null when it could not be measured. */
  value: number | null;
  unit: string;
  min: number | null;
  max: number | null;
  baseline?: number;
  ratio?: number;
  /** The target as text, e.g. "ratio <= 1.25". */
  target: string;
  /** null when not measured, or when the figure is reported without a target. */
  met: boolean | null;
  /** How many runs or samples the figure is made of. */
  runs: number;
  /** How it was measured, and for a missed target the reason found by profiling. */
  notes: string[];
}

/** A figure that could not be measured, with the reason. */
export function notMeasured(id: string, description: string, unit: string, target: string, reason: string): FigureResult {
  return { id, description, value: null, unit, min: null, max: null, target, met: null, runs: 0, notes: [`not measured: ${reason}`] };
}
