import { describe, expect, it } from 'vitest';
import { planOutput } from '../../src/activities/orchestration-activities';
import { planningProblem } from '../../src/api/planning-problem';
import { problemDocument } from '../../src/api/problem';
import { ApiRequestError, describeApiError } from '../../src/cli/api-transport';
import { problemSchema } from '../../src/contracts/api';
import { planningFailureCodes, refuse, type PlanningFailure } from '../../src/contracts/planning-failure';

/** The renderings of a typed planning failure (decision 0041): API problem, CLI lines, the model's text. */

const unknownSource: PlanningFailure = { field: 'source', code: 'source-not-found', message: 'No source named "dpeloy" was found. Did you mean: deploy?', suggestions: ['deploy'] };
const badModel: PlanningFailure = { field: 'model', code: 'model-not-allowed', message: 'model "gpt-9" is not allowed for provider "openai"; allowed: gpt-a, gpt-b' };

describe('refuse', () => {
  it('builds the failure, keeping suggestions only when there are some', () => {
    expect(refuse('source-not-found', 'source', 'no', ['deploy'])).toEqual({ ok: false, failure: { field: 'source', code: 'source-not-found', message: 'no', suggestions: ['deploy'] } });
    expect(refuse('model-not-allowed', 'model', 'no', [])).toEqual({ ok: false, failure: { field: 'model', code: 'model-not-allowed', message: 'no' } });
  });

  it('the codes are a closed list without repeats', () => {
    expect(new Set(planningFailureCodes).size).toBe(planningFailureCodes.length);
    for (const code of planningFailureCodes) expect(code).toMatch(/^[a-z]+(-[a-z]+)*$/);
  });
});

describe('the API problem', () => {
  it('an unknown source keeps its problem type and title; field, code and suggestions come from the failure', () => {
    const document = problemDocument(planningProblem(unknownSource), '/v1/delegations');
    expect(document).toEqual({
      type: 'urn:errand:problem:source-not-found',
      title: 'Unknown source',
      status: 422,
      detail: `source: ${unknownSource.message}`,
      instance: '/v1/delegations',
      errors: [{ in: 'body', field: 'source', code: 'source-not-found', message: unknownSource.message }],
      suggestions: ['deploy'],
    });
    expect(problemSchema.parse(document)).toEqual(document);
  });

  it('an unknown source with no close name still says suggestions: [] (its marker since before codes)', () => {
    const { suggestions: _none, ...bare } = unknownSource;
    expect(problemDocument(planningProblem(bare), '/v1/delegations').suggestions).toEqual([]);
  });

  it('any other refusal is invalid-delegation, with suggestions only when the planner gave some', () => {
    const document = problemDocument(planningProblem(badModel), '/v1/delegations');
    expect(document).toMatchObject({ type: 'urn:errand:problem:invalid-delegation', title: 'The delegation cannot start', status: 422, errors: [{ field: 'model', code: 'model-not-allowed' }] });
    expect(document).not.toHaveProperty('suggestions');
  });
});

describe("the CLI's lines", () => {
  it('name the code beside the field; a message the detail already says is not repeated', () => {
    const problem = problemDocument(planningProblem(unknownSource), '/v1/delegations');
    const lines = describeApiError(new ApiRequestError(422, problem, 'unused')).split('\n');
    expect(lines).toEqual([`Unknown source: source: ${unknownSource.message}`, '  - body source [source-not-found]', '  did you mean: deploy?']);
  });

  it('a problem without codes prints as before', () => {
    const problem = { type: 'urn:errand:problem:invalid-request', title: 'The request is not valid', status: 400, detail: '2 problems in the body', errors: [{ in: 'body' as const, field: 'max_turns', message: 'too small' }, { in: 'body' as const, field: 'temperature', message: 'too big' }] };
    expect(describeApiError(new ApiRequestError(400, problem, 'unused'))).toBe('The request is not valid: 2 problems in the body\n  - body max_turns: too small\n  - body temperature: too big');
  });
});

describe("the delegate tool's result", () => {
  it("a refusal becomes the model's message with the typed failure beside it; a plan passes as it is", () => {
    expect(planOutput({ ok: false, failure: unknownSource })).toEqual({ ok: false, message: unknownSource.message, failure: unknownSource });
    const plan = { ok: true as const, input: { label: 'x' } as never, warnings: [] };
    expect(planOutput(plan)).toBe(plan);
  });
});
