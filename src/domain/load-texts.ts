import { listingDescriptionChars } from '../contracts/limits/sources';
import { type SourceKind, type SourceSnapshot } from '../contracts/source';
import { type RecipeParameter } from '../contracts/recipe-schema';
import { requiredParameterKeys } from './recipe-parameters';

/**
 * The texts the `load` tool returns (SEMANTICS §2). Pure functions: the wording is pinned by tests, so
 * change it deliberately.
 */

/** One loadable source as the listing shows it. */
export interface SourceListingItem {
  name: string;
  kind: SourceKind;
  description?: string;
  /** Parameters the caller must supply. */
  requiredParameters: readonly string[];
}

/** A background task of the session, as the listing shows it. */
export interface BackgroundTaskSummary {
  id: string;
  state: 'running' | 'completed' | 'failed' | 'cancelled';
  description?: string;
}

/** Everything the no-argument `load` listing needs. */
export interface SourceListingText {
  sources: readonly SourceListingItem[];
  tasks: readonly BackgroundTaskSummary[];
  /** Descriptions of the places searched (shown when nothing was found). */
  searched: readonly string[];
  /** Store problems to surface (stale listings, unreadable files), already worded. */
  problems: readonly string[];
  /** Sources hidden by an earlier one of the same name, already worded. */
  shadowed?: readonly string[];
}

const kindOrder: Record<SourceKind, number> = { subrecipe: 0, recipe: 1, agent: 2 };
const kindHeadings: Record<SourceKind, string> = { subrecipe: 'Subrecipes', recipe: 'Recipes', agent: 'Agents' };

/** Cuts a description to about {@link listingDescriptionChars} characters on one line. */
export function cutDescription(text: string, limit: number = listingDescriptionChars): string {
  const line = text.replace(/\s+/g, ' ').trim();
  if (line.length <= limit) return line;
  const cut = line.slice(0, limit - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > limit * 0.6 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** The answer of `load()` with no source. */
export function formatSourceListing(input: SourceListingText): string {
  const lines: string[] = [];
  const sources = [...input.sources].sort((a, b) => kindOrder[a.kind] - kindOrder[b.kind]);
  if (sources.length === 0) {
    lines.push('No recipes, subrecipes or agents were found. Searched:');
    for (const place of input.searched) lines.push(`- ${place}`);
  } else {
    let heading: SourceKind | undefined;
    for (const source of sources) {
      if (source.kind !== heading) {
        if (heading !== undefined) lines.push('');
        heading = source.kind;
        lines.push(`${kindHeadings[source.kind]}:`);
      }
      const description = source.description ? ` — ${cutDescription(source.description)}` : '';
      const required = source.requiredParameters.length > 0 ? ` (required parameters: ${source.requiredParameters.join(', ')})` : '';
      lines.push(`- ${source.name} [${source.kind}]${description}${required}`);
    }
  }
  if (input.problems.length > 0) {
    lines.push('', 'Problems:');
    for (const problem of input.problems) lines.push(`- ${problem}`);
  }
  if (input.shadowed && input.shadowed.length > 0) {
    lines.push('', 'Hidden by a source of the same name:');
    for (const note of input.shadowed) lines.push(`- ${note}`);
  }
  if (input.tasks.length > 0) {
    lines.push('', 'Background tasks:');
    for (const task of input.tasks) {
      lines.push(`- ${task.id}: ${task.state}${task.description ? ` — ${cutDescription(task.description)}` : ''}`);
    }
  }
  lines.push(
    '',
    'Use load(source) to read a source, load(task_id) to wait for a background task (peek: true to check without waiting, cancel: true to stop it), and delegate(source, parameters, instructions) to run one in a subagent.',
  );
  return lines.join('\n');
}

/** The answer of `load(source)` for a source: its content for the model. */
export function formatSourceContent(snapshot: SourceSnapshot): string {
  const lines: string[] = [];
  const definition = snapshot.definition;
  if (definition.type === 'agent') {
    const agent = definition.agent;
    lines.push(`# ${agent.name} (agent)`);
    if (agent.description) lines.push(agent.description);
    if (agent.tools) lines.push(`Tools: ${agent.tools.join(', ')}`);
    lines.push('', agent.instructions);
    return lines.join('\n');
  }
  const recipe = definition.recipe;
  lines.push(`# ${snapshot.name} (${snapshot.kind}): ${recipe.title}`, recipe.description);
  if (snapshot.subRecipe) lines.push(`Subrecipe of ${snapshot.subRecipe.parent}.`);
  if (recipe.instructions) lines.push('', '## Instructions', recipe.instructions.trimEnd());
  if (recipe.prompt) lines.push('', '## Prompt', recipe.prompt.trimEnd());
  const fixed = snapshot.fixedValues;
  const open = snapshot.parameters.filter((parameter) => fixed[parameter.key] === undefined);
  if (open.length > 0) {
    lines.push('', '## Parameters');
    for (const parameter of open) lines.push(describeParameter(parameter));
  }
  const fixedKeys = Object.keys(fixed);
  if (fixedKeys.length > 0) {
    lines.push('', '## Fixed values (set by the parent recipe; they override parameters you pass)');
    for (const key of fixedKeys) lines.push(`- ${key} = ${JSON.stringify(fixed[key])}`);
  }
  const required = requiredParameterKeys(open);
  if (required.length > 0) lines.push('', `Pass ${required.join(', ')} in delegate's parameters.`);
  return lines.join('\n');
}

function describeParameter(parameter: RecipeParameter): string {
  const facts: string[] = [parameter.input_type, parameter.requirement];
  if (parameter.default !== undefined) facts.push(`default ${JSON.stringify(parameter.default)}`);
  if (parameter.options && parameter.options.length > 0) facts.push(`options: ${parameter.options.join(' | ')}`);
  const description = parameter.description ? ` — ${parameter.description.trim()}` : '';
  return `- ${parameter.key} (${facts.join(', ')})${description}`;
}

/** The answer for an unknown source name, with up to three suggestions. */
export function formatSourceNotFound(name: string, suggestions: readonly string[]): string {
  const base = `No source named "${name}" was found.`;
  if (suggestions.length === 0) return `${base} Call load() with no source to list what is available.`;
  return `${base} Did you mean: ${suggestions.join(', ')}? Call load() with no source to list what is available.`;
}
