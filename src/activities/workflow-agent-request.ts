import { claudeModelAliases, type ModelAliasTable } from '../contracts/agent-definition';
import type { JsonObject } from '../contracts/json';
import { delegateRequestSchema, type DelegateRequest } from '../contracts/delegation';

/**
 * An `agent(prompt, options)` call of a workflow script as a `delegate` request (SEMANTICS §7): the prompt
 * is the task, `agentType` (or `agent`) names the agent definition run through the sources, `label` is
 * the delegation's description, `model` (a Claude alias mapped through `aliases`) and `effort` choose the
 * route as `delegate` does, `schema` asks for a structured result and `isolation: 'worktree'` for a worktree. `phase` is for the view only.
 */
export function delegateRequestOf(prompt: string, options: JsonObject, aliases: ModelAliasTable = {}): { ok: true; request: DelegateRequest } | { ok: false; message: string } {
  const named = options['agentType'] ?? options['agent'];
  const label = options['label'];
  const model = unaliased(options['model'], aliases);
  const request: Record<string, unknown> = { instructions: prompt };
  if (typeof named === 'string') request['source'] = named;
  if (typeof label === 'string' && label.length > 0) request['description'] = label.slice(0, 200);
  if (typeof model === 'string') {
    const slash = model.indexOf('/');
    if (slash > 0) {
      request['provider'] = model.slice(0, slash);
      request['model'] = model.slice(slash + 1);
    } else request['model'] = model;
  } else if (model !== undefined) request['model'] = model;
  if (options['effort'] !== undefined) request['reasoning_effort'] = options['effort'];
  if (options['isolation'] !== undefined) request['isolation'] = options['isolation'];
  if (options['schema'] !== undefined) request['output_schema'] = options['schema'];
  const parsed = delegateRequestSchema.safeParse(request);
  if (!parsed.success) {
    const names: Record<string, string> = { output_schema: 'schema', reasoning_effort: 'effort', description: 'label', source: 'agentType' };
    return {
      ok: false,
      message: `agent() options are not valid: ${parsed.error.issues.map((issue) => `${names[String(issue.path[0])] ?? issue.path.join('.')}: ${issue.message}`).join('; ')}`,
    };
  }
  return { ok: true, request: parsed.data };
}

/**
 * A script's `model` with Claude Code's aliases (`haiku`, `sonnet`, `opus`) mapped through the operator's table,
 * as an agent file's `model` is; an unmapped alias chooses the model as if none were given.
 */
function unaliased(model: unknown, aliases: ModelAliasTable): unknown {
  if (typeof model !== 'string') return model;
  if (Object.hasOwn(aliases, model)) return aliases[model];
  return (claudeModelAliases as readonly string[]).includes(model) ? undefined : model;
}
