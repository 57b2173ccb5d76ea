// Lint rules that keep the zones of DESIGN.md: workflow code stays deterministic and free of I/O.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = builtinModules.flatMap((name) => [name, `node:${name}`, `${name}/*`, `node:${name}/*`]);

export default tseslint.config(
  // Workflow script fixtures are scripts in Claude Code's dialect (top-level return, the script API's
  // globals), data for the sandbox's tests rather than code of ours.
  { ignores: ['node_modules/**', 'dist/**', '.tools/**', 'infra/cdk.out/**', 'test-artifacts/**', 'bench/.work/**', 'coverage/**', 'test/fixtures/workflow-scripts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
    },
  },
  {
    files: ['src/workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...nodeBuiltins.map((name) => ({ name, message: 'Workflow code is deterministic: no Node builtins (do I/O in an activity).' })),
            { name: '@temporalio/workflow', importNames: ['uuid4'], message: 'No random ids in workflow code: derive ids from the run (workflow id, sequence numbers); a draw moves the seeded stream that queries must not touch.' },
          ],
          patterns: [
            { group: ['@aws-sdk/*'], message: 'No AWS SDK in workflow code: use an activity.' },
            { group: ['ai', '@ai-sdk/*'], message: 'No AI SDK in workflow code: model calls are activities.' },
            { group: ['yaml'], message: 'No yaml in workflow code: sources arrive parsed in the input snapshot.' },
            { group: ['zod', 'ajv'], message: 'No validation libraries in workflow code: activities validate, workflows get checked JSON.' },
            { group: ['@opentelemetry/*', '@temporalio/interceptors-opentelemetry', '@temporalio/interceptors-opentelemetry/*'], message: 'No OpenTelemetry in workflow code: its modules are evaluated per cached run (decision 0033); src/workflows/trace-interceptors.ts traces workflows.' },
            { group: ['fs', 'fs/*', 'node:*'], message: 'No Node builtins in workflow code.' },
            { group: ['**/activities/**', '**/sources/**', '**/llm/**', '**/tools/**', '**/api/**', '**/settings/**', '**/dev/**', '**/workflow-scripts/**'], message: 'Workflow code may import only @temporalio/workflow, contracts/ and domain/.' },
            { group: ['quickjs-emscripten-core', '@jitl/*'], message: 'No script engine in workflow code: a workflow replays a script\'s requests; the script runs in activities (src/workflow-scripts/).' },
            { group: ['@temporalio/client', '@temporalio/worker', '@temporalio/activity', '@temporalio/testing'], message: 'Workflow code may use only @temporalio/workflow.' },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'setInterval', 'setImmediate', 'process', 'require'],
      'no-restricted-properties': ['error', { object: 'Math', property: 'random', message: 'No Math.random in workflow code: derive values from the run; the seeded stream is replayed, and queries and validators (never replayed) must not move it.' }],
    },
  },
  {
    // domain/ is pure logic that workflows may use: no I/O, and nothing from the zones that do I/O.
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'domain/ is pure: no Node builtins (do I/O in activities/, sources/ or tools/).' })),
          patterns: [
            { group: ['fs', 'fs/*', 'node:*'], message: 'domain/ is pure: no Node builtins.' },
            { group: ['@aws-sdk/*', 'ai', '@ai-sdk/*', 'yaml', '@temporalio/*'], message: 'domain/ is pure logic: no SDKs.' },
            { group: ['**/activities/**', '**/sources/**', '**/llm/**', '**/tools/**', '**/api/**', '**/cli/**', '**/workflows/**', '**/workflow-scripts/**', '**/settings/**', '**/dev/**'], message: 'domain/ may import only contracts/ and domain/.' },
          ],
        },
      ],
    },
  },
  {
    // A function over 120 lines does several things at once: split it where its steps part (a closure that
    // grew into a module's worth of code becomes its own function or module).
    files: ['src/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 120 }] },
  },
  {
    // contracts/ is the bottom layer: wire types, message definitions, schemas and limits.
    files: ['src/contracts/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'contracts/ holds wire types and schemas only: no Node builtins.' })),
          patterns: [
            { group: ['fs', 'fs/*', 'node:*'], message: 'contracts/ holds wire types and schemas only: no Node builtins.' },
            { group: ['@aws-sdk/*', 'ai', '@ai-sdk/*', 'yaml', '@temporalio/client', '@temporalio/worker', '@temporalio/activity'], message: 'contracts/ holds wire types and schemas only: no SDKs.' },
            { group: ['**/domain/**', '**/activities/**', '**/sources/**', '**/llm/**', '**/tools/**', '**/api/**', '**/cli/**', '**/workflows/**', '**/settings/**', '**/dev/**'], message: 'contracts/ may import only contracts/ (it is what every other zone builds on).' },
          ],
        },
      ],
    },
  },
);
