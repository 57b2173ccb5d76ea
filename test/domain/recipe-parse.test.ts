import { describe, expect, it } from 'vitest';
import { parseRecipeDocument } from '../../src/domain/recipe-parse';
import { checkParameterDeclarations, requiredParameterKeys, resolveParameterValues } from '../../src/domain/recipe-parameters';
import { type RecipeParameter } from '../../src/contracts/recipe-schema';

const base = { title: 'Deploy', description: 'Deploys things', instructions: 'Deploy {{ target }}' };

describe('parseRecipeDocument', () => {
  it('reads a plain recipe and fills goose defaults', () => {
    const result = parseRecipeDocument({ ...base, version: 1.0, parameters: [{ key: 'target', requirement: 'required', default: 80 }] }, 'deploy.yaml');
    expect(result.errors).toEqual([]);
    expect(result.recipe?.version).toBe('1');
    expect(result.recipe?.parameters?.[0]).toMatchObject({ key: 'target', input_type: 'string', default: '80', description: '' });
  });

  it('reads the desktop-saved {recipe: {...}} form from the inner object', () => {
    const result = parseRecipeDocument({ recipe: { ...base } }, 'saved.yaml');
    expect(result.recipe?.title).toBe('Deploy');
  });

  it('keeps unknown keys and reports them as warnings, never errors', () => {
    const result = parseRecipeDocument({ ...base, colour: 'blue', extensions: [{ type: 'builtin', name: 'developer', shiny: true }] }, 'deploy.yaml');
    expect(result.errors).toEqual([]);
    expect(result.warnings).toEqual(['deploy.yaml: colour: unknown field, ignored', 'deploy.yaml: extensions[0].shiny: unknown field, ignored']);
    expect(result.recipe).toHaveProperty('colour', 'blue');
  });

  it('names the file, the field path and what was expected for a wrong type', () => {
    const result = parseRecipeDocument({ ...base, parameters: [{ key: 'target', requirement: 'must' }], settings: { max_turns: 'many' } }, 'deploy.yaml');
    expect(result.recipe).toBeUndefined();
    expect(result.errors).toContain('deploy.yaml: parameters[0].requirement: expected one of required, optional, user_prompt (got "must")');
    expect(result.errors.some((error) => error.startsWith('deploy.yaml: settings.max_turns: expected a whole number'))).toBe(true);
  });

  it('requires title, description, and instructions or prompt', () => {
    expect(parseRecipeDocument({ description: 'x', instructions: 'y' }, 'a.yaml').errors).toEqual([
      'a.yaml: title: is required (expected a string (the recipe title is required))',
    ]);
    expect(parseRecipeDocument({ title: 't', description: 'd' }, 'a.yaml').errors).toEqual([
      'a.yaml: instructions, prompt: at least one of the two is required (a non-empty string)',
    ]);
  });

  it('types extensions by type and rejects unknown types with the valid list', () => {
    const ok = parseRecipeDocument(
      {
        ...base,
        extensions: [
          { type: 'stdio', name: 'fs', cmd: 'npx', args: ['server'], envs: { A: 1 }, env_keys: ['TOKEN'], timeout: 300 },
          { type: 'streamable_http', name: 'web', uri: 'https://example.com/mcp', headers: { X: 'y' } },
          { type: 'inline_python', name: 'py', code: 'print(1)', dependencies: ['numpy'] },
          { type: 'platform', name: 'todo' },
          { type: 'frontend', name: 'ui', tools: [] },
        ],
      },
      'a.yaml',
    );
    expect(ok.errors).toEqual([]);
    const bad = parseRecipeDocument({ ...base, extensions: [{ type: 'sse', name: 'old' }, { type: 'stdio', name: 'x' }] }, 'a.yaml');
    expect(bad.errors[0]).toContain('a.yaml: extensions[0].type: expected an extension whose type is one of builtin, platform, stdio');
    expect(bad.errors[1]).toContain('a.yaml: extensions[1].cmd: is required');
  });

  it('rejects a response without a usable json_schema', () => {
    expect(parseRecipeDocument({ ...base, response: {} }, 'a.yaml').errors).toEqual(['a.yaml: response.json_schema: expected a non-empty JSON Schema object']);
  });
});

const parameter = (fields: Partial<RecipeParameter> & { key: string }): RecipeParameter => ({
  input_type: 'string',
  requirement: 'required',
  description: '',
  ...fields,
});

describe('parameter declarations', () => {
  it('reports undeclared variables, unused parameters, optional without default and file with default', () => {
    const recipe = parseRecipeDocument(
      {
        ...base,
        parameters: [
          { key: 'target', requirement: 'required' },
          { key: 'unused', requirement: 'required' },
          { key: 'level', requirement: 'optional' },
          { key: 'notes', input_type: 'file', requirement: 'required', default: '/etc/passwd' },
        ],
      },
      'deploy.yaml',
    ).recipe;
    expect(recipe).toBeDefined();
    if (!recipe) return;
    const errors = checkParameterDeclarations(recipe, ['target', 'level', 'notes', 'region', 'recipe_dir'], 'deploy.yaml');
    expect(errors).toEqual([
      'deploy.yaml: template variable "region" is not declared; add it to parameters (key: region) or remove it from the template',
      'deploy.yaml: parameters[1] "unused": declared but never used in the recipe; use {{ unused }} or remove the declaration',
      'deploy.yaml: parameters[2] "level": optional parameters need a default value; add default: or make it required',
      'deploy.yaml: parameters[3] "notes": file parameters cannot have a default (it could import a sensitive file); remove default:',
    ]);
  });
});

describe('parameter values', () => {
  const parameters = [
    parameter({ key: 'count', input_type: 'number' }),
    parameter({ key: 'dry', input_type: 'boolean', requirement: 'optional', default: 'false' }),
    parameter({ key: 'day', input_type: 'date' }),
    parameter({ key: 'env', input_type: 'select', options: ['dev', 'prod'] }),
    parameter({ key: 'who', requirement: 'user_prompt' }),
  ];

  it('accepts valid values, applies defaults and lets fixed values win', () => {
    const result = resolveParameterValues(parameters, { count: 3, day: '2025-02-03', env: 'prod', who: 'model' }, { who: 'parent' }, 'a.yaml');
    expect(result.errors).toEqual([]);
    expect(result.values).toEqual({ count: '3', dry: 'false', day: '2025-02-03', env: 'prod', who: 'parent' });
  });

  it('names the file and parameter for each invalid or missing value', () => {
    const result = resolveParameterValues(parameters, { count: 'three', dry: 'maybe', day: 'Tuesday', env: 'staging', extra: 1 }, {}, 'a.yaml');
    expect(result.errors).toEqual([
      'a.yaml: parameter "extra" is not declared by this recipe; valid parameters: count, dry, day, env, who',
      'a.yaml: parameter "count": expected a number, got "three"',
      'a.yaml: parameter "dry": expected true or false, got "maybe"',
      'a.yaml: parameter "day": expected a date (YYYY-MM-DD, optionally with a time), got "Tuesday"',
      'a.yaml: parameter "env": "staging" is not one of the options: dev, prod',
      'a.yaml: parameter "who" (string) is required',
    ]);
  });

  it('lists required parameters (user_prompt without default counts: a subagent has no user)', () => {
    expect(requiredParameterKeys(parameters)).toEqual(['count', 'day', 'env', 'who']);
  });
});
