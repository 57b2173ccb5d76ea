/**
 * Limits a recipe or agent file sets (SEMANTICS §6 "Files a tenant or a model wrote"): a definition may
 * lower the operator's limits, never raise them. A file a tenant wrote into its own folder is not the
 * operator's word, so a value above the operator's limit is capped to it, and the cap is reported in the
 * plan's warnings (the model and the user see it) instead of being applied silently.
 */

/** One limit a definition asks for. */
export interface DefinitionLimit {
  /** What asked, for the warning: `recipe settings.max_turns`, `agent maxTurns`, ... */
  field: string;
  /** The file it comes from (`<store>: <path>`), when known. */
  file?: string;
  /** The value the definition asks for. */
  asked: number;
  /** The operator's limit. */
  limit: number;
  /** The setting that holds the operator's limit, for the warning. */
  setting: string;
  /** Unit for the warning (`turns`, `tokens`, `seconds`). */
  unit: string;
}

/** The value to use, and the warning when the definition asked for more than the operator allows. */
export interface CappedLimit {
  value: number;
  warning?: string;
}

/** Caps a definition's value at the operator's limit and says so when it had to. Pure. */
export function capDefinitionLimit(limit: DefinitionLimit): CappedLimit {
  if (limit.asked <= limit.limit) return { value: limit.asked };
  const where = limit.file ? `${limit.file}: ` : '';
  return {
    value: limit.limit,
    warning: `${where}${limit.field} asks for ${limit.asked} ${limit.unit}, above this server's limit of ${limit.limit} (${limit.setting}); it runs with ${limit.limit}. A recipe or agent file can lower the operator's limits, never raise them.`,
  };
}
