import type { Hono } from 'hono';
import { modelsResponseSchema } from '../../contracts/model-api';
import { listSourcesResponseSchema, sourceContentResponseSchema } from '../../contracts/source-api';
import { formatSourceContent, formatSourceNotFound } from '../../domain/load-texts';
import type { ApiDependencies } from '../api-dependencies';
import type { ApiEnv } from '../api-env';
import { ApiProblem, ProblemKind } from '../problem';
import { mountRoute, sendJson } from '../route-spec';
import { getSourceRoute, listModelsRoute, listSourcesRoute } from '../route-table';
import { suggestNames } from '../../domain/name-suggestions';
import { routeCatalog } from '../../llm/provider-config';
import { publicStoreId, redactServerPaths } from '../../domain/redact-paths';

/** Mounts `/v1/sources` and `/v1/models`: what can be delegated, and with which models. */
export function mountCatalogRoutes(app: Hono<ApiEnv>, deps: ApiDependencies): void {
  mountRoute(app, listSourcesRoute, async ({ query, tenant, c }) => {
    const sources = deps.sourcesFor?.(tenant);
    if (!sources) return sendJson(c, listSourcesResponseSchema, 200, { items: [], problems: ['no source stores are configured for this API'], shadowed: [], stores: [], searched: [] });
    const listing = await sources.list({ refresh: query.refresh === 'true' });
    return sendJson(c, listSourcesResponseSchema, 200, {
      items: listing.items.map((item) => ({ name: item.name, kind: item.kind, description: item.description ?? null, requiredParameters: [...item.requiredParameters] })),
      problems: listing.problems,
      shadowed: listing.shadowed,
      stores: listing.stores.map((store) => ({ id: store.id, description: store.description, stale: store.stale, ...(store.error ? { error: store.error } : {}) })),
      searched: listing.searched,
    });
  });

  mountRoute(app, getSourceRoute, async ({ params, tenant, c }) => {
    const sources = deps.sourcesFor?.(tenant);
    const resolved = sources ? await sources.resolve(params.name) : { ok: false as const, reason: 'not_found' as const, message: formatSourceNotFound(params.name, []), suggestions: [] };
    if (!resolved.ok) {
      if (resolved.reason === 'not_found') {
        throw new ApiProblem(404, ProblemKind.sourceNotFound, 'Unknown source', {
          detail: resolved.message,
          suggestions: resolved.suggestions,
          errors: [{ in: 'path', field: 'name', message: resolved.suggestions.length > 0 ? `no source named "${params.name}"; did you mean ${resolved.suggestions.join(', ')}?` : `no source named "${params.name}"` }],
        });
      }
      throw new ApiProblem(422, ProblemKind.invalidDelegation, 'The source is not valid', { detail: resolved.message, errors: [{ in: 'path', field: 'name', message: resolved.message }] });
    }
    const { snapshot, warnings } = resolved;
    return sendJson(c, sourceContentResponseSchema, 200, {
      name: snapshot.name,
      kind: snapshot.kind,
      // The snapshot keeps the store's real id (a local folder's holds its path); answers show its label.
      store: { id: publicStoreId(snapshot.store.id, snapshot.store.description), description: redactServerPaths(snapshot.store.description) },
      path: snapshot.path,
      version: snapshot.version,
      contentHash: snapshot.contentHash,
      text: formatSourceContent(snapshot),
      content: snapshot.content,
      parameters: snapshot.parameters.map((parameter) => ({
        key: parameter.key,
        input_type: parameter.input_type,
        requirement: parameter.requirement,
        ...(parameter.description ? { description: parameter.description } : {}),
        ...(parameter.default === undefined ? {} : { default: parameter.default }),
        ...(parameter.options ? { options: parameter.options } : {}),
      })),
      warnings,
    });
  });

  mountRoute(app, listModelsRoute, async ({ query, c }) => {
    const { providers, defaultModel } = deps.config;
    // The same catalog list_subagent_models reads (src/domain/route-discovery.ts), so the two agree.
    const catalog = routeCatalog(providers);
    const chosen = query.provider === undefined ? catalog : catalog.filter((provider) => provider.name === query.provider);
    if (query.provider !== undefined && chosen.length === 0) {
      const suggestions = suggestNames(query.provider, catalog.map((provider) => provider.name));
      throw new ApiProblem(404, ProblemKind.notFound, 'Unknown provider', {
        detail: `no provider named "${query.provider}" is configured; configured: ${catalog.map((provider) => provider.name).join(', ') || '(none)'}`,
        suggestions,
        errors: [{ in: 'query', field: 'provider', message: suggestions.length > 0 ? `no provider named "${query.provider}"; did you mean ${suggestions.join(', ')}?` : `no provider named "${query.provider}"` }],
      });
    }
    return sendJson(c, modelsResponseSchema, 200, {
      providers: chosen.map((provider) => ({
        provider: provider.name,
        kind: provider.kind,
        models: provider.models.map((model) => model.id),
        defaultModel: provider.defaultModel ?? null,
        entries: provider.models.map((model) => ({
          id: model.id,
          contextWindow: model.contextWindow,
          maxOutputTokens: model.maxOutputTokens ?? null,
          reasoningEfforts: [...model.reasoningEfforts],
          defaultReasoningEffort: model.defaultReasoningEffort ?? null,
          prices: model.prices ? { ...model.prices } : null,
        })),
      })),
      default: defaultModel ?? null,
    });
  });
}
