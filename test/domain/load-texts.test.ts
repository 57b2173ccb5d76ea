import { describe, expect, it } from 'vitest';
import { type SourceSnapshot } from '../../src/contracts/source';
import { cutDescription, formatSourceContent, formatSourceListing, formatSourceNotFound } from '../../src/domain/load-texts';
import { parseRecipeDocument } from '../../src/domain/recipe-parse';

const usageLine =
  'Use load(source) to read a source, load(task_id) to wait for a background task (peek: true to check without waiting, cancel: true to stop it), and delegate(source, parameters, instructions) to run one in a subagent.';

describe('formatSourceListing', () => {
  it('lists subrecipes, recipes and agents, then problems, tasks and the usage line', () => {
    const text = formatSourceListing({
      sources: [
        { name: 'reviewer', kind: 'agent', description: 'Reviews code', requiredParameters: [] },
        { name: 'deploy', kind: 'recipe', description: 'Deploys\nthe app', requiredParameters: ['target'] },
        { name: 'stats', kind: 'subrecipe', requiredParameters: [] },
      ],
      tasks: [{ id: 'task-1', state: 'running', description: 'deploying' }],
      searched: [],
      problems: ['S3 s3://b/p/: listing failed: down (showing the listing from before the failure)'],
    });
    expect(text).toBe(
      [
        'Subrecipes:',
        '- stats [subrecipe]',
        '',
        'Recipes:',
        '- deploy [recipe] — Deploys the app (required parameters: target)',
        '',
        'Agents:',
        '- reviewer [agent] — Reviews code',
        '',
        'Problems:',
        '- S3 s3://b/p/: listing failed: down (showing the listing from before the failure)',
        '',
        'Background tasks:',
        '- task-1: running — deploying',
        '',
        usageLine,
      ].join('\n'),
    );
  });

  it('says where it searched when nothing was found', () => {
    const text = formatSourceListing({ sources: [], tasks: [], searched: ['working directory /w', 'user ~/.goose/recipes'], problems: [] });
    expect(text).toBe(['No recipes, subrecipes or agents were found. Searched:', '- working directory /w', '- user ~/.goose/recipes', '', usageLine].join('\n'));
  });

  it('cuts long descriptions to about 160 characters', () => {
    const cut = cutDescription('word '.repeat(100));
    expect(cut.length).toBeLessThanOrEqual(160);
    expect(cut.endsWith('…')).toBe(true);
  });
});

describe('formatSourceContent', () => {
  const recipe = parseRecipeDocument(
    {
      title: 'Stats',
      description: 'Counts files',
      instructions: 'Count files in {{ dir }}.',
      prompt: 'Report {{ format }}.',
      parameters: [
        { key: 'dir', requirement: 'required', description: 'Folder' },
        { key: 'format', input_type: 'select', requirement: 'optional', default: 'md', options: ['md', 'json'] },
      ],
    },
    'stats.yaml',
  ).recipe;
  if (!recipe) throw new Error('fixture recipe must parse');
  const snapshot: SourceSnapshot = {
    kind: 'subrecipe',
    name: 'stats',
    store: { id: 'dir:/r', description: 'project .goose/recipes' },
    path: 'stats.yaml',
    recipeDir: '/r',
    version: 'mtime:x',
    contentHash: 'sha256:0',
    content: '',
    definition: { type: 'recipe', recipe },
    parameters: recipe.parameters ?? [],
    fixedValues: { format: 'json' },
    subRecipe: { parent: 'main', sequentialWhenRepeated: false },
  };

  it('shows instructions, prompt, open parameters and the fixed values of a subrecipe', () => {
    expect(formatSourceContent(snapshot)).toBe(
      [
        '# stats (subrecipe): Stats',
        'Counts files',
        'Subrecipe of main.',
        '',
        '## Instructions',
        'Count files in {{ dir }}.',
        '',
        '## Prompt',
        'Report {{ format }}.',
        '',
        '## Parameters',
        '- dir (string, required) — Folder',
        '',
        '## Fixed values (set by the parent recipe; they override parameters you pass)',
        '- format = "json"',
        '',
        'Pass dir in delegate\'s parameters.',
      ].join('\n'),
    );
  });

  it('shows types, defaults and options of a recipe', () => {
    const text = formatSourceContent({ ...snapshot, kind: 'recipe', fixedValues: {}, subRecipe: undefined });
    expect(text).toContain('- format (select, optional, default "md", options: md | json)');
  });

  it('shows an agent body', () => {
    const text = formatSourceContent({
      ...snapshot,
      kind: 'agent',
      definition: { type: 'agent', agent: { name: 'reviewer', description: 'Reviews', inheritModel: false, tools: ['Read'], instructions: 'Be direct.' } },
      parameters: [],
      fixedValues: {},
    });
    expect(text).toBe('# reviewer (agent)\nReviews\nTools: Read\n\nBe direct.');
  });
});

describe('formatSourceNotFound', () => {
  it('offers suggestions when there are some', () => {
    expect(formatSourceNotFound('dpeloy', ['deploy'])).toBe('No source named "dpeloy" was found. Did you mean: deploy? Call load() with no source to list what is available.');
    expect(formatSourceNotFound('x', [])).toBe('No source named "x" was found. Call load() with no source to list what is available.');
  });
});
