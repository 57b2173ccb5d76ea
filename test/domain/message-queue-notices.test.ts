import { describe, expect, test } from 'vitest';
import { recentMessageIdCount } from '../../src/contracts/limits';
import { newAgentState } from '../../src/domain/agent-state';
import { queueMessage, takeNextMessage } from '../../src/domain/message-queue';
import { acknowledgeNotices, addNotice, announceApproval, numberNotices, takeNotices } from '../../src/domain/notices';

describe('the message queue', () => {
  test('queues messages in order, drops a repeated delivery and hands them out one by one', () => {
    const first = queueMessage(newAgentState(0), { message: 'one', messageId: 'm1' }, true);
    expect(first.result).toEqual({ accepted: true, queuedTurns: 0 });
    const second = queueMessage(first.state, { messageKey: 'blob', messageChars: 9000, messageId: 'm2' }, false);
    expect(second.result).toEqual({ accepted: true, queuedTurns: 2 });
    const again = queueMessage(second.state, { message: 'one', messageId: 'm1' }, false);
    expect(again.result).toEqual({ accepted: true, queuedTurns: 2, duplicate: true });
    expect(again.state).toBe(second.state);
    const taken = takeNextMessage(second.state);
    expect(taken.message).toEqual({ text: 'one', preview: 'one' });
    expect(takeNextMessage(taken.state).message).toEqual({ key: 'blob', preview: '(stored message, 9000 characters)' });
    expect(takeNextMessage(newAgentState(0)).message).toBeUndefined();
  });

  test('keeps only the latest message ids', () => {
    let state = newAgentState(0);
    for (let index = 0; index <= recentMessageIdCount; index += 1) state = queueMessage(state, { message: 'm', messageId: `id-${index}` }, false).state;
    expect(state.recentMessageIds).toHaveLength(recentMessageIdCount);
    expect(state.recentMessageIds[0]).toBe('id-1');
  });
});

describe('notices', () => {
  test('are numbered once when offered and leave when acknowledged, later ones stay', () => {
    let state = addNotice(addNotice(newAgentState(0), { text: 'a', taskId: 'task-1' }), { text: 'b' });
    state = numberNotices(state);
    expect(state.pendingNotices.map((notice) => notice.number)).toEqual([1, 2]);
    state = numberNotices(addNotice(state, { text: 'c' }));
    expect(state.pendingNotices.map((notice) => notice.number)).toEqual([1, 2, 3]);
    const acknowledged = acknowledgeNotices(state, 2);
    expect(acknowledged.acknowledged.map((notice) => notice.text)).toEqual(['a', 'b']);
    expect(acknowledged.state.pendingNotices.map((notice) => notice.text)).toEqual(['c']);
    expect(acknowledged.state.lastNoticeNumber).toBe(3);
  });

  test('are taken all at once for the conversation', () => {
    const taken = takeNotices(addNotice(newAgentState(0), { text: 'a' }));
    expect(taken.notices).toEqual([{ text: 'a' }]);
    expect(taken.state.pendingNotices).toEqual([]);
  });

  test('announce a child\'s approval once', () => {
    const first = announceApproval(newAgentState(0), 'w:1:0');
    expect(first.announced).toBe(true);
    const second = announceApproval(first.state, 'w:1:0');
    expect(second.announced).toBe(false);
    expect(second.state.announcedApprovals).toEqual(['w:1:0']);
  });
});
