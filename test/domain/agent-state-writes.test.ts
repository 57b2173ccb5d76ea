import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { newAgentState } from '../../src/domain/agent-state';

/**
 * Decision 0040: the agent's durable state is assigned in one module (src/workflows/agent-state-owner.ts)
 * and changed through the pure functions of src/domain/. The types already refuse an assignment elsewhere
 * (the state is read-only outside its owner); this check also catches a cast that gets around them.
 */
const workflows = resolve(__dirname, '..', '..', 'src', 'workflows');
const owner = 'agent-state-owner.ts';
const fields = [...Object.keys(newAgentState(0)), 'context', 'pending', 'lastText', 'retryView', 'finalOutput', 'worktree', 'registry'];
const write = new RegExp(String.raw`\bagent\.(?:state\.)?(${fields.join('|')})\b(?:\.\w+)*\s*(?:=(?!=)|\+=|-=|\+\+|--)|\bagent\.(?:state\.)?(${fields.join('|')})\.(?:push|splice|shift|unshift|pop|sort|reverse)\(`);

describe('where the agent state is written', () => {
  test('no workflow module but its owner assigns a field of the agent\'s state', () => {
    const offending = readdirSync(workflows)
      .filter((name) => name.endsWith('.ts') && name !== owner)
      .flatMap((name) => readFileSync(join(workflows, name), 'utf8').split('\n').map((line, index) => ({ where: `${name}:${index + 1}`, line })))
      .filter(({ line }) => write.test(line))
      .map(({ where, line }) => `${where}: ${line.trim()}`);
    expect(offending).toEqual([]);
  });

  test('the check sees a write', () => {
    expect(write.test('agent.state.turns += 1;')).toBe(true);
    expect(write.test('this.agent.pendingNotices.push(notice);')).toBe(true);
    expect(write.test('if (agent.state.turns === 1) return;')).toBe(false);
  });
});
