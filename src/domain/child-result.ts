import { inlineTextLimit } from '../contracts/limits/workflow';
import type { SubagentResult } from '../contracts/subagent-result';
import { preview } from './subagent-prompt';

/**
 * What a child tells its parent about a run (SEMANTICS §4: history holds counters and previews, never the
 * whole text): its settlement signal, its workflow result and what `probeChildren` reports. An output or
 * partial output longer than {@link inlineTextLimit} (or one the child holds only as a preview) becomes a
 * preview, and the whole text stays at `outputRef` in the conversation store (`outputCut`). A structured
 * result's JSON is that text, so its `structured` copy goes too (`structuredCut` says it went). A short
 * result is returned whole.
 */
export function slimChildResult(result: SubagentResult): SubagentResult {
  const { structured, ...rest } = result;
  const long = result.output.length > inlineTextLimit || result.partialOutput.length > inlineTextLimit || result.outputCut === true;
  if (!long) return { ...rest, ...(structured ? { structured } : {}) };
  return {
    ...rest,
    output: preview(result.output, inlineTextLimit),
    partialOutput: preview(result.partialOutput, inlineTextLimit),
    outputCut: result.outputRef !== undefined,
    ...(structured && result.outputRef ? { structuredCut: true } : {}),
  };
}
