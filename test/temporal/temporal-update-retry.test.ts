import { describe, expect, test } from 'vitest';
import { refusedByWorkflowTaskFailure, sendUpdateAcrossRunChange } from '../../src/temporal/temporal-update-retry';

/** The error the Temporal client throws when an update meets a run that is continuing as new. */
function refusal(): Error {
  const cause = Object.assign(new Error('9 FAILED_PRECONDITION: Unable to perform workflow execution update due to unexpected workflow task failure.'), {
    code: 9,
    details: 'Unable to perform workflow execution update due to unexpected workflow task failure.',
  });
  return Object.assign(new Error('Workflow Update failed'), { cause });
}

describe('sendUpdateAcrossRunChange', () => {
  test('recognises the refusal through the client\'s wrapping, and nothing else', () => {
    expect(refusedByWorkflowTaskFailure(refusal())).toBe(true);
    expect(refusedByWorkflowTaskFailure(Object.assign(new Error('other'), { code: 9, details: 'workflow execution already completed' }))).toBe(false);
    expect(refusedByWorkflowTaskFailure(Object.assign(new Error('unexpected workflow task failure'), { code: 14 }))).toBe(false);
    expect(refusedByWorkflowTaskFailure('not an error')).toBe(false);
  });

  test('sends again after the refusal and returns the answer', async () => {
    let calls = 0;
    const answer = await sendUpdateAcrossRunChange(async () => {
      calls += 1;
      if (calls < 3) throw refusal();
      return 'accepted';
    }, 5, 1);
    expect({ answer, calls }).toEqual({ answer: 'accepted', calls: 3 });
  });

  test('gives up after the last attempt, and passes any other error on at once', async () => {
    let calls = 0;
    await expect(sendUpdateAcrossRunChange(async () => {
      calls += 1;
      throw refusal();
    }, 3, 1)).rejects.toThrow('Workflow Update failed');
    expect(calls).toBe(3);
    calls = 0;
    await expect(sendUpdateAcrossRunChange(async () => {
      calls += 1;
      throw new Error('rejected by the handler');
    }, 3, 1)).rejects.toThrow('rejected by the handler');
    expect(calls).toBe(1);
  });
});
