import { expect, test } from 'vitest';
import { startedTaskIdOf } from '../../src/domain/mcp-session-tools';

test("startedTaskIdOf reads errand's task id from a background call's answer, and nothing from any other answer", () => {
  expect(startedTaskIdOf('Started task-3 in the background (continuable: send_message keeps talking to it). Its result…')).toBe('task-3');
  expect(startedTaskIdOf('Started task-12 in the background: workflow run errand-wf-0123 (fan.js). ')).toBe('task-12');
  expect(startedTaskIdOf('done: Started task-4 in the background')).toBeUndefined();
  expect(startedTaskIdOf('delegate did not run: the session ended')).toBeUndefined();
});
