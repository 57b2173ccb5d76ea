import { expect, test } from 'vitest';
import { startedTaskIdOf, waitsInForeground } from '../../src/domain/mcp-session-tools';

test("startedTaskIdOf reads errand's task id from a background call's answer, and nothing from any other answer", () => {
  expect(startedTaskIdOf('Started task-3 in the background (continuable: send_message keeps talking to it). Its result…')).toBe('task-3');
  expect(startedTaskIdOf('Started task-12 in the background: workflow run errand-wf-0123 (fan.js). ')).toBe('task-12');
  expect(startedTaskIdOf('done: Started task-4 in the background')).toBeUndefined();
  expect(startedTaskIdOf('delegate did not run: the session ended')).toBeUndefined();
});

test('waitsInForeground: a delegate or run_workflow its caller waits for, not an async one or another tool', () => {
  expect(waitsInForeground('delegate', { instructions: 'x' })).toBe(true);
  expect(waitsInForeground('run_workflow', undefined)).toBe(true);
  expect(waitsInForeground('delegate', { async: true })).toBe(false);
  expect(waitsInForeground('load', {})).toBe(false);
  expect(waitsInForeground(undefined, {})).toBe(false);
});
