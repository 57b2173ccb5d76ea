import { maxPersonaChars } from '../contracts/limits/sources';
import { costBudgetUsdCeiling, costBudgetUsdFloor, timeBudgetSecsCeiling } from '../contracts/limits/workflow';
import type { ToolSpec } from '../contracts/model';
import { childWordsRule } from './child-words';

/**
 * The parent's own tools (SEMANTICS §2, §7): `load`, `delegate`, `run_workflow`, `send_message`, `list_subagent_models`.
 * They are handled by the workflow itself (delegations are child workflows), not by a toolset, so their
 * names carry no toolset prefix. Pure data: the model-call activity adds the specs a workflow asks for.
 */
export const OrchestrationTool = {
  load: 'load',
  delegate: 'delegate',
  runWorkflow: 'run_workflow',
  sendMessage: 'send_message',
  listSubagentModels: 'list_subagent_models',
  approve: 'approve',
} as const;

/** One of the orchestration tool names. */
export type OrchestrationToolName = (typeof OrchestrationTool)[keyof typeof OrchestrationTool];

const names: readonly string[] = Object.values(OrchestrationTool);

/** Whether a tool name is one of the orchestration tools. */
export function isOrchestrationTool(name: string): name is OrchestrationToolName {
  return names.includes(name);
}

/** JSON schemas of the orchestration tools, as offered to the model. */
export const orchestrationToolSpecs: Record<OrchestrationToolName, ToolSpec> = {
  load: {
    name: 'load',
    description:
      'Discover and inspect what can be delegated, and manage background tasks. With no arguments: list recipes, ' +
      'subrecipes, agents and your background tasks. With `source` set to a source name: show its content and ' +
      'parameters. With `source` set to one of your task ids: wait for that task and return its result (or, with ' +
      '`peek: true`, show its progress without waiting; with `cancel: true`, cancel it).',
    inputSchema: {
      type: 'object',
      properties: {
        source: { type: 'string', description: 'A source name or one of your task ids.' },
        peek: { type: 'boolean', description: 'With a task id: show progress without waiting.' },
        cancel: { type: 'boolean', description: 'With a task id: cancel the task and everything under it.' },
      },
      additionalProperties: false,
    },
  },
  delegate: {
    name: 'delegate',
    description:
      'Hand a task to a subagent that works on its own and returns its final answer. Give `instructions` (ad hoc), ' +
      'a `source` (recipe, subrecipe or agent, with `parameters`), or both. Set `async: true` to run it in the ' +
      'background and get a task id at once; `continuable: true` keeps it available for `send_message` after it answers. ' +
      '`fork: true` starts it from this conversation so far, with `instructions` as its task. ' +
      `Several delegate calls in one turn run in parallel. ${childWordsRule}`,
    inputSchema: {
      type: 'object',
      properties: {
        instructions: { type: 'string', description: 'The task (or what to add after the source prompt).' },
        source: { type: 'string', description: 'Name of a recipe, subrecipe or agent.' },
        parameters: { type: 'object', description: 'Recipe parameters (only with source).', additionalProperties: { type: ['string', 'number', 'boolean'] } },
        extensions: { type: 'array', items: { type: 'string' }, description: 'Toolsets for the subagent: omit to inherit yours, [] for none.' },
        provider: { type: 'string', description: 'Provider to run it on (list_subagent_models lists them). Omit: the default route.' },
        model: { type: 'string', description: "Model at that provider (list_subagent_models(provider) lists them)." },
        temperature: { type: 'number', minimum: 0, maximum: 2 },
        reasoning_effort: {
          type: 'string',
          description:
            'How hard a reasoning model thinks, e.g. "low" or "high": one of the efforts list_subagent_models(provider, model) lists. ' +
            "Omit: the model's default (your own effort when it runs on your model).",
        },
        persona: {
          type: 'string',
          maxLength: maxPersonaChars,
          description: 'Who the subagent is (role, voice, standards): a section of its own system prompt, kept apart from instructions and context.',
        },
        fork: {
          type: 'boolean',
          description:
            'Start the subagent from this conversation so far (your completed turns, shared by reference, not copied), with instructions as its task. ' +
            "It keeps your provider, model and reasoning effort (so the provider's prompt cache applies), answers once (not continuable), " +
            'and takes no source, persona or context.',
        },
        max_turns: { type: 'integer', minimum: 1, description: 'Model calls the subagent may make.' },
        context: { type: 'string', description: 'Reference material for the subagent, kept apart from the task.' },
        working_dir: { type: 'string', description: 'Working directory inside yours.' },
        async: { type: 'boolean', description: 'Run in the background and return a task id at once.' },
        continuable: { type: 'boolean', description: 'Background, and stays available for send_message.' },
        description: { type: 'string', description: 'Short label for listings.' },
        token_budget: { type: 'integer', minimum: 1, description: 'Token budget of the subagent and its descendants.' },
        time_budget: {
          type: 'integer',
          minimum: 1,
          maximum: timeBudgetSecsCeiling,
          description: 'Wall-clock seconds the subagent may run (its descendants included); checked before each of its model calls. Never more than what is left of yours.',
        },
        cost_budget_usd: {
          type: 'number',
          minimum: costBudgetUsdFloor,
          maximum: costBudgetUsdCeiling,
          description:
            'US dollars the subagent and its descendants may spend on model calls (priced by the model entry; list_subagent_models shows prices). ' +
            'Never more than what is left of yours. A fork or a long context is estimated before it starts and refused if it would not fit.',
        },
        max_output_tokens: { type: 'integer', minimum: 1, description: 'Output-token limit of each of its model calls.' },
        output_schema: {
          type: 'object',
          description:
            'JSON Schema (with "type": "object") of a structured result: the subagent finishes by calling a final_output tool with ' +
            'arguments that match it, and you get that JSON as its result. Replaces a recipe\'s response.json_schema.',
        },
        isolation: {
          type: 'string',
          enum: ['worktree'],
          description:
            '"worktree": the subagent works in a new git worktree of the working directory, on a branch errand/<task id>; ' +
            'with no changes it is removed at the end, otherwise the result names the branch and the folder.',
        },
      },
      additionalProperties: false,
    },
  },
  run_workflow: {
    name: 'run_workflow',
    description:
      'Run a workflow: a script that runs many subagents (agent(), parallel(), pipeline(), args), as a durable run of its own. ' +
      'Give `name` (a workflow source, .claude/workflows/<name>.js) or `script` (the script inline), its `args`, and caps: ' +
      'they cover every agent of the run, never more than what is left of yours, and a run whose projected cost passes its money cap is refused. ' +
      'Without `async` you get the script\'s result when the run ends; with `async: true` you get a task id at once (its workflow run id too): ' +
      'load with that task id waits for it, peek: true shows its agents and cost, cancel: true stops it and every agent.',
    inputSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'A workflow source: .claude/workflows/<name>.js in the operator\'s stores, the project or your home.' },
        script: { type: 'string', description: 'The workflow script, inline (instead of name).' },
        args: { description: 'The value the script reads as `args` (any JSON).' },
        async: { type: 'boolean', description: 'Run in the background and return a task id at once.' },
        description: { type: 'string', description: 'Short label for listings.' },
        token_budget: { type: 'integer', minimum: 1, description: 'Tokens every agent of the run may use together; the agents running at once share it.' },
        time_budget: { type: 'integer', minimum: 1, maximum: timeBudgetSecsCeiling, description: 'Wall-clock seconds the whole run may take. Never more than what is left of yours.' },
        cost_budget_usd: {
          type: 'number',
          minimum: costBudgetUsdFloor,
          maximum: costBudgetUsdCeiling,
          description: 'US dollars every agent of the run may cost together (the agents running at once share it). Never more than what is left of yours; a run projected to cost more is refused.',
        },
        concurrency: { type: 'integer', minimum: 1, description: "Agents running at once (at most the operator's limit)." },
        max_agents: { type: 'integer', minimum: 1, description: "agent() calls the run may make (at most the operator's limit)." },
      },
      additionalProperties: false,
    },
  },
  send_message: {
    name: 'send_message',
    description: 'Send the next message to one of your continuable background tasks. The answer arrives as a task notice.',
    inputSchema: {
      type: 'object',
      properties: { task_id: { type: 'string' }, message: { type: 'string' } },
      required: ['task_id', 'message'],
      additionalProperties: false,
    },
  },
  approve: {
    name: 'approve',
    description: "Approve or deny a tool call one of your tasks is waiting on (you get a task notice with its approval_id). A denial's reason is shown to the subagent.",
    inputSchema: {
      type: 'object',
      properties: {
        approval_id: { type: 'string' },
        decision: { type: 'string', enum: ['approve', 'deny'] },
        reason: { type: 'string' },
      },
      required: ['approval_id', 'decision'],
      additionalProperties: false,
    },
  },
  list_subagent_models: {
    name: 'list_subagent_models',
    description:
      'Discover the routes a delegation may take, one level at a time. No arguments: the providers (kind, default model, number of ' +
      'models). With `provider`: its models (context window, output-token limit, reasoning efforts; the default marked). With ' +
      '`provider` and `model`: the reasoning efforts that model takes, the default marked.',
    inputSchema: {
      type: 'object',
      properties: {
        provider: { type: 'string', description: 'A provider name: list its models.' },
        model: { type: 'string', description: 'A model of that provider: list its reasoning efforts.' },
      },
      additionalProperties: false,
    },
  },
};
