import { describe, expect, test } from 'vitest';
import { agentEffortLevels } from '../../src/contracts/agent-definition';
import { chooseModel, effortScale, nearestEffort, type ModelChoiceInputs, type ProviderChoice } from '../../src/domain/model-precedence';

/**
 * An agent file's `effort` (Claude Code's levels) as a reasoning effort (SEMANTICS §6): it ranks where a
 * recipe's `settings.reasoning_effort` does, and an effort the chosen model does not take becomes the
 * nearest one it does, with a warning.
 */

const providers: ProviderChoice[] = [
  {
    name: 'openai',
    models: ['o-think', 'o-plain', 'o-wide', 'o-names'],
    defaultModel: 'o-think',
    efforts: {
      'o-think': { efforts: ['low', 'medium', 'high'], default: 'medium' },
      'o-wide': { efforts: ['minimal', 'low', 'high', 'max'], default: 'low' },
      'o-names': { efforts: ['fast', 'deep'], default: 'fast' },
    },
  },
];

function inputs(overrides: Partial<ModelChoiceInputs> = {}): ModelChoiceInputs {
  return { providers, override: {}, request: {}, recipe: {}, parent: { provider: 'openai', model: 'o-think', reasoningEffort: 'low' }, ...overrides };
}

function chosen(overrides: Partial<ModelChoiceInputs>): { effort: string | undefined; warnings: string[] } {
  const choice = chooseModel(inputs(overrides));
  if (!choice.ok) throw new Error(`expected a route, got: ${choice.failure.message}`);
  return { effort: choice.route.reasoningEffort, warnings: choice.warnings };
}

describe("an agent's effort in the route", () => {
  test("ranks below delegate's reasoning_effort and above the parent's effort and the model's default", () => {
    expect(chosen({ agentEffort: 'high' })).toEqual({ effort: 'high', warnings: [] });
    expect(chosen({ agentEffort: 'high', request: { reasoningEffort: 'medium' } })).toEqual({ effort: 'medium', warnings: [] });
    // Without one, the parent's effort (same model) applies, then the model's default.
    expect(chosen({}).effort).toBe('low');
    expect(chosen({ parent: { provider: 'openai', model: 'o-think' } }).effort).toBe('medium');
  });

  test('an effort the model does not take becomes the nearest it takes, with a warning naming both', () => {
    expect(chosen({ agentEffort: 'max' })).toEqual({
      effort: 'high',
      warnings: ['the agent\'s effort "max" is not one model openai/o-think takes (valid: low, medium (default), high); the nearest, "high", is used'],
    });
    expect(chosen({ agentEffort: 'xhigh' }).effort).toBe('high');
    // o-wide takes minimal, low, high and max: medium is as near to low as to high, and the lower wins.
    expect(chosen({ agentEffort: 'medium', request: { model: 'o-wide' } }).effort).toBe('low');
    expect(chosen({ agentEffort: 'xhigh', request: { model: 'o-wide' } }).effort).toBe('high');
  });

  test('a model with no effort, or none on the scale, gets none from the agent, with a warning; its default applies', () => {
    expect(chosen({ agentEffort: 'high', request: { model: 'o-plain' } })).toEqual({
      effort: undefined,
      warnings: ['the agent\'s effort "high" cannot be used: model openai/o-plain takes no reasoning effort; it was not used'],
    });
    expect(chosen({ agentEffort: 'high', request: { model: 'o-names' } })).toEqual({
      effort: 'fast',
      warnings: ['the agent\'s effort "high" cannot be used: model openai/o-names takes no effort on the low-to-max scale (valid: fast (default), deep); it was not used'],
    });
  });

  test('nearestEffort on its own, over the whole scale', () => {
    expect(effortScale).toEqual(['none', 'minimal', ...agentEffortLevels]);
    expect(nearestEffort('low', ['minimal', 'medium'])).toBe('minimal');
    expect(nearestEffort('max', ['low', 'medium'])).toBe('medium');
    expect(nearestEffort('low', ['max', 'xhigh'])).toBe('xhigh');
    expect(nearestEffort('high', ['deep'])).toBeUndefined();
    expect(nearestEffort('deep', ['high'])).toBeUndefined();
  });
});
