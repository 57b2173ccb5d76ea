import { describe, expect, test } from 'vitest';
import { delegateRequestSchema } from '../../src/contracts/delegation';
import { maxPersonaChars } from '../../src/contracts/limits/sources';
import { forkRefusal, forkRoute } from '../../src/domain/fork-rules';
import { orchestrationToolSpecs } from '../../src/domain/orchestration-tools';
import { chooseModel, chooseReasoningEffort, defaultOutputTokensFor, type ModelChoiceInputs, type ProviderChoice } from '../../src/domain/model-precedence';
import { formatRouteDiscovery, type CatalogProvider } from '../../src/domain/route-discovery';
import { buildForkTask, buildSubagentSystemPrompt } from '../../src/domain/subagent-prompt';
import { providerChoices, routeCatalog, withDefaultEffort } from '../../src/llm/provider-config';

/**
 * Model routes as pure logic (SEMANTICS §3 style precedence, §5 "Model routes"): which reasoning effort a
 * delegation gets, what a fork may be combined with, the three levels of route discovery, and where a
 * persona and a fork's task go in the prompt.
 */

const providers: ProviderChoice[] = [
  {
    name: 'openai',
    models: ['o-think', 'o-plain', 'o-other'],
    defaultModel: 'o-think',
    efforts: { 'o-think': { efforts: ['low', 'medium', 'high'], default: 'medium' }, 'o-other': { efforts: ['minimal', 'high'], default: 'minimal' } },
  },
  { name: 'anthropic', models: ['c-think'], defaultModel: 'c-think', efforts: { 'c-think': { efforts: ['low', 'high'] } } },
];

function inputs(overrides: Partial<ModelChoiceInputs> = {}): ModelChoiceInputs {
  return {
    providers,
    override: {},
    request: {},
    recipe: {},
    parent: { provider: 'openai', model: 'o-think', reasoningEffort: 'high' },
    ...overrides,
  };
}

function route(choice: ReturnType<typeof chooseModel>) {
  if (!choice.ok) throw new Error(`expected a route, got: ${choice.failure.message}`);
  return choice.route;
}

describe('no provider configured', () => {
  test('says that none is configured and which settings configure one, instead of naming a placeholder provider', () => {
    const choice = chooseModel(inputs({ providers: [], parent: { provider: '(none)', model: '(none)' } }));
    expect(choice).toEqual({ ok: false, failure: { field: 'provider', code: 'provider-not-configured', message: expect.stringContaining('no usable provider: none is configured. Set ERRAND_PROVIDERS') } });
    expect(choice.ok ? '' : choice.failure.message).not.toContain('"(none)"');
  });
});

describe('a parent with no model of its own (an MCP session)', () => {
  const { parent: _parent, ...routeless } = inputs();
  test('its delegation takes the configured default, else what the delegation names', () => {
    expect(route(chooseModel({ ...routeless, configuredDefault: { provider: 'anthropic', model: 'c-think' } }))).toEqual({ provider: 'anthropic', model: 'c-think' });
    expect(route(chooseModel({ ...routeless, request: { provider: 'openai' } }))).toEqual({ provider: 'openai', model: 'o-think', reasoningEffort: 'medium' });
  });
  test('with neither, the delegation (not the session\'s start) is refused with the setting that fixes it', () => {
    const choice = chooseModel(routeless);
    expect(choice.ok).toBe(false);
    expect(choice.ok ? '' : choice.failure.message).toMatch(/no default model is configured and the delegating session has none of its own.*Set ERRAND_DEFAULT_MODEL/);
  });
  test('cannot fork: there is no conversation or route to keep', () => {
    expect(forkRefusal(delegateRequestSchema.parse({ instructions: 'x', fork: true }), { hasConversation: false, override: {} })).toContain('needs a conversation to fork');
  });
});

describe('reasoning effort precedence', () => {
  test('delegate > recipe settings > the parent (same model) > the model default', () => {
    expect(route(chooseModel(inputs({ request: { reasoningEffort: 'low' }, recipe: { reasoningEffort: 'medium' } }))).reasoningEffort).toBe('low');
    expect(route(chooseModel(inputs({ recipe: { reasoningEffort: 'low' } }))).reasoningEffort).toBe('low');
    // Same provider and model as the parent, nothing named: the parent's effort is kept.
    expect(route(chooseModel(inputs()))).toEqual({ provider: 'openai', model: 'o-think', reasoningEffort: 'high' });
    // A parent without an effort: the model's default.
    expect(route(chooseModel(inputs({ parent: { provider: 'openai', model: 'o-think' } }))).reasoningEffort).toBe('medium');
  });

  test('a model change without an effort uses the new model\'s default, never the parent\'s', () => {
    // o-other takes "high" too, but the parent's choice was for another model: its default applies.
    expect(route(chooseModel(inputs({ request: { model: 'o-other' } })))).toEqual({ provider: 'openai', model: 'o-other', reasoningEffort: 'minimal' });
    // A provider change: claude has no default effort, so none is sent.
    expect(route(chooseModel(inputs({ request: { provider: 'anthropic' } })))).toEqual({ provider: 'anthropic', model: 'c-think' });
    // A model that takes no effort gets none, whatever the parent used.
    expect(route(chooseModel(inputs({ request: { model: 'o-plain' } })))).toEqual({ provider: 'openai', model: 'o-plain' });
    // The configured default is a change too when it is not the parent's model.
    expect(route(chooseModel(inputs({ parent: { provider: 'anthropic', model: 'c-think', reasoningEffort: 'high' }, configuredDefault: { provider: 'openai', model: 'o-other' } }))).reasoningEffort).toBe('minimal');
  });

  test('an effort the model does not take is an error naming the valid ones; a recipe\'s is a warning', () => {
    const wrong = chooseModel(inputs({ request: { reasoningEffort: 'extreme' } }));
    expect(wrong).toEqual({ ok: false, failure: { field: 'reasoning_effort', code: 'effort-not-allowed', message: expect.stringContaining('reasoning_effort "extreme" is not one model openai/o-think takes; valid efforts: low, medium (default), high') } });
    const none = chooseModel(inputs({ request: { model: 'o-plain', reasoningEffort: 'low' } }));
    expect(none).toEqual({ ok: false, failure: { field: 'reasoning_effort', code: 'effort-not-allowed', message: expect.stringContaining('model openai/o-plain takes no reasoning effort') } });
    const recipe = chooseModel(inputs({ request: { model: 'o-other' }, recipe: { reasoningEffort: 'medium' } }));
    expect(recipe.ok && recipe.route.reasoningEffort).toBe('minimal');
    expect(recipe.ok && recipe.warnings).toEqual([expect.stringContaining('the recipe\'s reasoning_effort "medium" is not one model openai/o-other takes (valid: minimal (default), high); it was not used')]);
  });

  test('the operator override chooses the model the effort is checked against', () => {
    const forced = chooseModel(inputs({ override: { model: 'o-plain' }, request: { reasoningEffort: 'high' } }));
    expect(forced).toEqual({ ok: false, failure: { field: 'reasoning_effort', code: 'effort-not-allowed', message: expect.stringContaining('openai/o-plain takes no reasoning effort') } });
  });

  test('chooseReasoningEffort on its own: an effort the parent used on the same model but the model no longer lists is dropped', () => {
    expect(chooseReasoningEffort({ route: { provider: 'p', model: 'm' }, efforts: { efforts: ['low'], default: 'low' }, parent: { provider: 'p', model: 'm', reasoningEffort: 'high' } })).toEqual({ ok: true, effort: 'low', warnings: [] });
  });
});

describe('provider entries as precedence and discovery see them', () => {
  const configs = [
    { name: 'openai', kind: 'openai-compatible' as const, baseUrl: 'http://127.0.0.1:1/v1', models: ['plain', { id: 'thinker', contextWindow: 64_000, maxOutputTokens: 4_000, reasoningEfforts: ['low', 'high'], defaultReasoningEffort: 'low' }], defaultModel: 'thinker' },
  ];

  test('providerChoices carries efforts per model; withDefaultEffort gives a session route its model default', () => {
    expect(providerChoices(configs)).toEqual([{ name: 'openai', models: ['plain', 'thinker'], defaultModel: 'thinker', efforts: { thinker: { efforts: ['low', 'high'], default: 'low' } }, maxOutputTokens: { thinker: 4000 } }]);
    expect(withDefaultEffort(configs, { provider: 'openai', model: 'thinker' })).toEqual({ provider: 'openai', model: 'thinker', reasoningEffort: 'low' });
    expect(withDefaultEffort(configs, { provider: 'openai', model: 'plain' })).toEqual({ provider: 'openai', model: 'plain' });
    expect(withDefaultEffort(configs, { provider: 'openai', model: 'thinker', reasoningEffort: 'high' }).reasoningEffort).toBe('high');
  });

  test('routeCatalog applies the default context window to plain ids', () => {
    expect(routeCatalog(configs)[0]?.models).toEqual([
      { id: 'plain', contextWindow: 128_000, reasoningEfforts: [] },
      { id: 'thinker', contextWindow: 64_000, maxOutputTokens: 4_000, reasoningEfforts: ['low', 'high'], defaultReasoningEffort: 'low' },
    ]);
  });
});

describe('route discovery in three levels', () => {
  const catalog: CatalogProvider[] = [
    { name: 'openai', kind: 'openai-compatible', defaultModel: 'thinker', models: [{ id: 'plain', contextWindow: 128_000, reasoningEfforts: [] }, { id: 'thinker', contextWindow: 64_000, maxOutputTokens: 4_000, reasoningEfforts: ['low', 'high'], defaultReasoningEffort: 'low' }] },
    { name: 'anthropic', kind: 'anthropic', models: [{ id: 'claude', contextWindow: 200_000, reasoningEfforts: ['low', 'medium', 'high'] }] },
  ];
  const context = { defaultRoute: { provider: 'openai', model: 'thinker' }, defaultMaxOutputTokens: 8_192 };

  test('no arguments: providers with kind, default model and number of models', () => {
    const text = formatRouteDiscovery(catalog, context, {});
    expect(text).toContain('- openai (openai-compatible): 2 models, default model thinker');
    expect(text).toContain('- anthropic (anthropic): 1 model, no default model (name one)');
    expect(text).toContain('A delegation that names no route runs on openai/thinker.');
    expect(text).not.toContain('context window');
  });

  test('a provider: its models with context window, output limit and efforts, the defaults marked', () => {
    const text = formatRouteDiscovery(catalog, context, { provider: 'openai' });
    expect(text).toContain('- plain: context window 128000 tokens, output limit 8192 (the configured default) tokens, reasoning efforts: none');
    expect(text).toContain("- thinker (the provider's default, the default route): context window 64000 tokens, output limit 4000 tokens, reasoning efforts: low (default), high");
  });

  test('a small model without its own output limit gets half its context window, and says so', () => {
    const small: CatalogProvider[] = [{ name: 'local', kind: 'openai-compatible', models: [{ id: 'gemma', contextWindow: 4_096, reasoningEfforts: [] }] }];
    expect(formatRouteDiscovery(small, context, { provider: 'local' })).toContain(
      '- gemma: context window 4096 tokens, output limit 2048 (half its context window, under the configured default) tokens, reasoning efforts: none',
    );
    expect(defaultOutputTokensFor(4_096, 8_192)).toBe(2_048);
    expect(defaultOutputTokensFor(128_000, 8_192)).toBe(8_192);
    expect(defaultOutputTokensFor(16_000, 8_192)).toBe(8_000);
  });

  test('a model with prices shows them, so the parent can weigh a cheaper route', () => {
    const priced: CatalogProvider[] = [{ name: 'openai', kind: 'openai-compatible', models: [{ id: 'cheap', contextWindow: 128_000, reasoningEfforts: [], prices: { input: 0.4, output: 1.6, cachedInput: 0.1 } }] }];
    expect(formatRouteDiscovery(priced, context, { provider: 'openai' })).toContain(
      '- cheap: context window 128000 tokens, output limit 8192 (the configured default) tokens, reasoning efforts: none, US dollars per million tokens: 0.4 in, 1.6 out, 0.1 cached in',
    );
  });

  test('a provider and a model: its efforts with the default marked; a model alone finds its provider', () => {
    const text = formatRouteDiscovery(catalog, context, { provider: 'openai', model: 'thinker' });
    expect(text.split('\n').slice(0, 3)).toEqual(['Reasoning efforts of openai/thinker:', '- low (default)', '- high']);
    expect(formatRouteDiscovery(catalog, context, { model: 'claude' })).toContain('Reasoning efforts of anthropic/claude:\n- low\n- medium\n- high');
    expect(formatRouteDiscovery(catalog, context, { provider: 'openai', model: 'plain' })).toBe('openai/plain takes no reasoning effort (its provider entry lists no reasoningEfforts): delegate to it without reasoning_effort.');
  });

  test('unknown names: a clear answer with suggestions', () => {
    expect(formatRouteDiscovery(catalog, context, { provider: 'opneai' })).toBe('No provider named "opneai" is configured. Did you mean "openai"? Providers: openai, anthropic.');
    expect(formatRouteDiscovery(catalog, context, { provider: 'openai', model: 'thinkr' })).toBe('Provider openai has no model named "thinkr". Did you mean "thinker"? Its models: plain, thinker.');
    expect(formatRouteDiscovery(catalog, context, { model: 'claud' })).toContain('No provider offers a model named "claud". Did you mean "claude"?');
    expect(formatRouteDiscovery([], context, {})).toContain('No providers are configured');
  });
});

describe('fork rules', () => {
  const parentRoute = { provider: 'openai', model: 'o-think', reasoningEffort: 'high' };
  const context = { hasConversation: true, parentRoute, override: {} };

  test('a fork with instructions only is fine and keeps the parent route', () => {
    expect(forkRefusal({ instructions: 'x', fork: true }, context)).toBeUndefined();
    expect(forkRoute(parentRoute, undefined)).toEqual(parentRoute);
    expect(forkRoute(parentRoute, 0.2)).toEqual({ ...parentRoute, temperature: 0.2 });
  });

  test('each combination that cannot work says why', () => {
    expect(forkRefusal({ instructions: 'x', fork: true }, { ...context, hasConversation: false })).toMatch(/^fork: true needs a conversation to fork/);
    expect(forkRefusal({ instructions: 'x', fork: true, continuable: true }, context)).toMatch(/^fork and continuable cannot be combined: a fork is one-shot/);
    expect(forkRefusal({ instructions: 'x', fork: true, model: 'o-plain', reasoning_effort: 'low' }, context)).toBe(
      "fork cannot be combined with model, reasoning_effort: a fork keeps your route (openai/o-think with reasoning effort high), because a different provider, model or reasoning effort would not reuse the provider's prompt cache of the conversation it continues; leave them out, or delegate without fork",
    );
    expect(forkRefusal({ instructions: 'x', fork: true }, { ...context, override: { model: 'o-plain' } })).toMatch(/operator routes every delegation to o-plain/);
    expect(forkRefusal({ instructions: 'x', fork: true }, { ...context, override: { model: 'o-think' } })).toBeUndefined();
    expect(forkRefusal({ source: 'deploy', fork: true }, context)).toMatch(/^fork cannot be combined with source/);
    expect(forkRefusal({ instructions: 'x', fork: true, persona: 'p', context: 'c' }, context)).toMatch(/^fork cannot be combined with persona or context: a fork keeps your system prompt unchanged/);
  });
});

describe('the delegate tool the model sees', () => {
  test('offers exactly the fields the request schema takes (reasoning_effort, persona and fork among them)', () => {
    const offered = Object.keys((orchestrationToolSpecs.delegate.inputSchema as { properties: Record<string, unknown> }).properties).sort();
    expect(offered).toEqual(Object.keys(delegateRequestSchema.shape).sort());
    expect(offered).toEqual(expect.arrayContaining(['reasoning_effort', 'persona', 'fork']));
  });
});

describe('persona and the fork task in the prompt', () => {
  test('persona is a section of its own, before instructions and context', () => {
    const prompt = buildSubagentSystemPrompt({ persona: 'You are a terse reviewer.', instructions: 'Review.', context: 'Ref.', workingDir: '/w', maxTurns: 5, toolsets: [] });
    expect(prompt).toContain('# Persona\n\nYou are a terse reviewer.\n\n# Instructions\n\nReview.\n\n# Reference material\n\nRef.');
    expect(buildSubagentSystemPrompt({ workingDir: '/w', maxTurns: 5, toolsets: [] })).not.toContain('# Persona');
  });

  test('persona has a length limit with a clear error', () => {
    const parsed = delegateRequestSchema.safeParse({ instructions: 'x', persona: 'p'.repeat(maxPersonaChars + 1) });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]).toMatchObject({ path: ['persona'], message: `persona must be at most ${maxPersonaChars} characters: a persona says who the subagent is in a few paragraphs; put reference material into context` });
    expect(delegateRequestSchema.safeParse({ instructions: 'x', persona: 'p'.repeat(maxPersonaChars) }).success).toBe(true);
  });

  test('a fork task says what changed, then the task', () => {
    const task = buildForkTask({ task: 'Check the tests.', maxTurns: 4, workingDir: '/w', toolsets: ['developer'], canDelegate: false });
    expect(task).toMatch(/^\[errand\] You are now a fork of this conversation/);
    expect(task).toContain('You have at most 4 turns (model calls). Your working directory is /w.');
    expect(task).toContain('You cannot delegate any further.');
    expect(task.endsWith('# Your task\n\nCheck the tests.')).toBe(true);
  });
});
