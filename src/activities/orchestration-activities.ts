import type { LoadListingInput, LoadSourceInput, OrchestrationActivities, PlanDelegationInput, PlanDelegationOutput } from '../contracts/activities';
import { delegateRequestSchema } from '../contracts/delegation';
import { formatSourceContent } from '../domain/load-texts';
import type { ModelRegistry } from '../llm/model-port';
import type { SourceResolver } from '../sources/source-resolver';
import { planDelegation, type PlanContext } from './plan-delegation';

/** What the orchestration activities need. */
export interface OrchestrationDependencies {
  models: ModelRegistry;
  /** The source resolver for a working directory (cached per directory, so listing caches work). */
  resolverFor(workingDir: string): SourceResolver;
  /** Planning settings from configuration (everything but the resolver). */
  planning: Omit<PlanContext, 'resolver'>;
}

/** Formats the `list_subagent_models` answer. */
export function formatModelList(models: ModelRegistry, defaultRoute: { provider: string; model: string } | undefined, filter: { provider?: string; model?: string }): string {
  const providers = models.providers().filter((provider) => !filter.provider || provider.name === filter.provider);
  if (providers.length === 0) {
    return filter.provider ? `No provider named "${filter.provider}" is configured. Configured: ${models.providers().map((p) => p.name).join(', ') || '(none)'}.` : 'No providers are configured.';
  }
  const lines = ['Models a delegation may use (provider: models):'];
  for (const provider of providers) {
    const names = provider.models
      .filter((model) => !filter.model || model.toLowerCase().includes(filter.model.toLowerCase()))
      .map((model) => (defaultRoute?.provider === provider.name && defaultRoute.model === model ? `${model} (default)` : model));
    lines.push(`- ${provider.name} (${provider.kind}): ${names.length > 0 ? names.join(', ') : '(no match)'}`);
  }
  lines.push('Pass `provider` and `model` to delegate to choose one; a model without a provider must belong to the default provider.');
  return lines.join('\n');
}

/** Builds the activities behind `load`, `delegate` planning and `list_subagent_models`. */
export function createOrchestrationActivities(deps: OrchestrationDependencies): OrchestrationActivities {
  return {
    async planDelegation(input: PlanDelegationInput): Promise<PlanDelegationOutput> {
      const parsed = delegateRequestSchema.safeParse(input.request);
      if (!parsed.success) {
        return { ok: false, message: parsed.error.issues.map((issue) => `${issue.path.join('.') || '(arguments)'}: ${issue.message}`).join('; ') };
      }
      return planDelegation(parsed.data, input.parent, { ...deps.planning, resolver: deps.resolverFor(input.parent.workingDir) });
    },
    async loadListing(input: LoadListingInput): Promise<string> {
      return deps.resolverFor(input.workingDir).listingText({
        ...(input.recipe ? { sessionRecipe: input.recipe.snapshot, sessionValues: input.recipe.values } : {}),
        tasks: input.tasks,
      });
    },
    async loadSource(input: LoadSourceInput): Promise<string> {
      const resolved = await deps.resolverFor(input.workingDir).resolve(input.name, {
        ...(input.recipe ? { sessionRecipe: input.recipe.snapshot, sessionValues: input.recipe.values } : {}),
      });
      if (!resolved.ok) return resolved.message;
      return formatSourceContent(resolved.snapshot);
    },
    async listSubagentModels(filter: { provider?: string; model?: string }): Promise<string> {
      return formatModelList(deps.models, deps.planning.configuredDefault, filter);
    },
  };
}
