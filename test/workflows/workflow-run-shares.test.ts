import { describe, expect, test } from 'vitest';
import { agentReservation, capsWithin } from '../../src/workflows/workflow-run-caps';

/** The shares of a run's caps its agents start with (decision 0050), as pure functions. */

describe("an agent's share of a run's caps", () => {
  test('an equal share of what is left after what the running agents hold', () => {
    expect(agentReservation({ remainingCostMicroUsd: 10_000 }, [], 8)).toEqual({ costMicroUsd: 1_250 });
    expect(agentReservation({ remainingCostMicroUsd: 10_000 }, [{ costMicroUsd: 1_250 }], 7)).toEqual({ costMicroUsd: 1_250 });
    expect(agentReservation({ remainingTokens: 9_000, remainingCostMicroUsd: 900 }, [{ tokens: 3_000, costMicroUsd: 300 }], 2)).toEqual({ tokens: 3_000, costMicroUsd: 300 });
  });

  test('an agent alone gets all that is left; a run without token or cost caps reserves nothing', () => {
    expect(agentReservation({ remainingTokens: 5_000 }, [], 1)).toEqual({ tokens: 5_000 });
    expect(agentReservation({ remainingTimeMs: 60_000 }, [], 16)).toEqual({});
  });

  test('none while the running agents hold all that is left (the agent waits); at least 1 when nothing runs', () => {
    expect(agentReservation({ remainingCostMicroUsd: 2_000 }, [{ costMicroUsd: 2_000 }], 1)).toBeUndefined();
    expect(agentReservation({ remainingTokens: 100, remainingCostMicroUsd: 5_000 }, [{ tokens: 100, costMicroUsd: 10 }], 1)).toBeUndefined();
    expect(agentReservation({ remainingTokens: 1 }, [], 16)).toEqual({ tokens: 1 });
  });

  test("a planned agent's caps are lowered to its share, never raised", () => {
    expect(capsWithin({ tokenBudget: 50_000, timeBudgetMs: 1_000 }, { tokens: 4_000 })).toEqual({ tokenBudget: 4_000, timeBudgetMs: 1_000 });
    expect(capsWithin({ costBudgetMicroUsd: 100 }, { costMicroUsd: 4_000 })).toEqual({ costBudgetMicroUsd: 100 });
    expect(capsWithin({}, { costMicroUsd: 4_000 })).toEqual({ costBudgetMicroUsd: 4_000 });
  });
});
