import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { FinalOutputVerdict } from '../contracts/activities';
import { FailureType } from '../contracts/failures';
import type { JsonObject } from '../contracts/json';
import { optionalUsageFields, zeroUsage, type AnswerCap, type ChatMessage, type FinishReason, type ModelResponse, type TokenUsage } from '../contracts/model';
import { isConversationMessageConflictError, type ConversationStore } from './conversation-store';

/*
 * Decision 0002: a model answer or tool result is stored as the conversation message at its sequence
 * number, with what the message does not hold beside it, and the first writer wins. These helpers store
 * such outcomes and read them back, so a retried activity returns the stored outcome instead of working
 * again.
 */

/** A tool call's result as it is stored and returned (the final_output verdict only for final_output calls). */
export interface ToolResultOutcome {
  content: string;
  isError: boolean;
  finalOutput?: FinalOutputVerdict;
}

/**
 * Stores a message that is an activity's outcome, with what the message itself does not hold (`outcome`),
 * in one blob: the first writer wins. An attempt that timed out may still be running and store a
 * different answer than its retry; whichever stored first is the outcome, and the other continues with it.
 */
export async function storeFirstWins(conversations: ConversationStore, conversationId: string, seq: number, message: ChatMessage, outcome?: JsonObject): Promise<{ message: ChatMessage; outcome?: JsonObject; won: boolean }> {
  try {
    await conversations.append(conversationId, seq, message, outcome);
    return { message, ...(outcome ? { outcome } : {}), won: true };
  } catch (error) {
    if (!isConversationMessageConflictError(error)) throw error;
    const stored = await conversations.readStored(conversationId, seq);
    if (!stored) throw error;
    return { ...stored, won: false };
  }
}

/** Appends a message unless one is stored at that seq already (the first writer wins). */
export async function appendFirstWins(conversations: ConversationStore, conversationId: string, seq: number, message: ChatMessage): Promise<void> {
  try {
    await conversations.append(conversationId, seq, message);
  } catch (error) {
    if (!isConversationMessageConflictError(error)) throw error;
  }
}

function storedOutcomeFailure(conversationId: string, seq: number, what: string): ApplicationFailure {
  return ApplicationFailure.create({ type: FailureType.blobMissing, message: `message ${seq} of conversation ${conversationId} is not ${what}`, nonRetryable: true });
}

/** The model's answer as stored at `seq` (the assistant message and, in `outcome`, usage and finish reason). */
export function storedAnswer(stored: { message: ChatMessage; outcome?: JsonObject }, conversationId: string, seq: number): ModelResponse {
  const { message, outcome } = stored;
  if (message.role !== 'assistant') throw storedOutcomeFailure(conversationId, seq, 'a model answer');
  const usage = outcome?.usage;
  const finishReason = outcome?.finishReason;
  return {
    text: message.content,
    toolCalls: message.toolCalls ?? [],
    finishReason: typeof finishReason === 'string' && isFinishReason(finishReason) ? finishReason : 'stop',
    usage: isUsage(usage) ? storedUsage(usage) : zeroUsage,
    ...(message.reasoning && message.reasoning.length > 0 ? { reasoning: message.reasoning } : {}),
    ...(isAnswerCap(outcome?.answerCap) ? { answerCap: outcome.answerCap } : {}),
  };
}

function isAnswerCap(value: unknown): value is AnswerCap {
  if (typeof value !== 'object' || value === null || !('cap' in value) || !('limit' in value) || !('setting' in value)) return false;
  return (value.cap === 'bytes' || value.cap === 'time' || value.cap === 'context') && typeof value.limit === 'number' &&
    (value.setting === 'ERRAND_MODEL_ANSWER_MAX_BYTES' || value.setting === 'ERRAND_MODEL_ANSWER_MAX_MS' || value.setting === 'time_budget' || value.setting === 'model server');
}

/** A tool call's result as stored at `seq` (the tool message and, for final_output, the verdict). */
export function storedToolResult(stored: { message: ChatMessage; outcome?: JsonObject }, conversationId: string, seq: number): ToolResultOutcome {
  const { message, outcome } = stored;
  if (message.role !== 'tool') throw storedOutcomeFailure(conversationId, seq, 'a tool result');
  const verdict = outcome?.finalOutput;
  return {
    content: message.content,
    isError: message.isError === true,
    // Written by this module from a FinalOutputVerdict (JSON), read back unchanged.
    ...(typeof verdict === 'object' && verdict !== null && !Array.isArray(verdict) ? { finalOutput: verdict as unknown as FinalOutputVerdict } : {}),
  };
}

const finishReasons: readonly string[] = ['stop', 'tool-calls', 'length', 'content-filter', 'error', 'other'] satisfies FinishReason[];
function isFinishReason(value: string): value is FinishReason {
  return finishReasons.includes(value);
}

/** The usage stored with an answer: the token counts and, when stored, the cached tokens and the cost. */
function storedUsage(usage: TokenUsage): TokenUsage {
  const optional = Object.fromEntries(optionalUsageFields.flatMap((field) => {
    const value: unknown = usage[field];
    return typeof value === 'number' && value !== 0 ? [[field, value]] : [];
  }));
  return { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens, ...optional };
}

function isUsage(value: unknown): value is TokenUsage {
  return typeof value === 'object' && value !== null && 'inputTokens' in value && 'outputTokens' in value && typeof value.inputTokens === 'number' && typeof value.outputTokens === 'number';
}

/**
 * Whether an earlier attempt of this activity may have run: any retry, and every run of a local activity
 * (a local activity starts again at attempt 1 when its workflow task is retried). A first attempt of a
 * normal activity skips the look-up (a read, or an S3 request, per call); if an outcome was stored anyway,
 * the first write still wins (see storeFirstWins).
 */
export function mayHaveRun(): boolean {
  const info = Context.current().info;
  return info.isLocal || info.attempt > 1;
}
