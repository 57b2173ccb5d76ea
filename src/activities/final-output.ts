import { ApplicationFailure } from '@temporalio/common';
import type { FinalOutputVerdict } from '../contracts/activities';
import { FailureType } from '../contracts/failures';
import type { JsonObject } from '../contracts/json';
import { maxStructuredOutputChars } from '../contracts/limits/sources';
import type { ToolSpec } from '../contracts/model';
import { finalOutputAccepted, finalOutputRejected, finalOutputToolDescription, finalOutputToolName } from '../domain/final-output';
import { outputValidator } from '../tools/output-schema';
import { isBlobConflictError, type BlobStore } from './blob-store';
import { conversationSegment } from './conversation-store';

/** Compiled schemas kept per worker (a schema under a key never changes: blob entries are immutable). */
const maxCachedSchemas = 64;

/** What a `final_output` call comes to: the tool result the model reads, and the verdict the workflow acts on. */
export interface FinalOutputResult {
  content: string;
  isError: boolean;
  finalOutput: FinalOutputVerdict;
}

/**
 * The worker side of structured output (SEMANTICS §5): stores a run's output schema once, offers it as
 * the `final_output` tool's input schema, and validates calls against it with ajv — here in an activity,
 * so the validator never enters the workflow bundle.
 */
export class FinalOutputTools {
  private readonly compiled = new Map<string, { schema: JsonObject; validate: (value: unknown) => string[] }>();

  constructor(private readonly blobs: BlobStore) {}

  /** Stores the schema of a run (first writer wins; the same schema again is a no-op) and returns its key. */
  async storeSchema(conversationId: string, schema: JsonObject): Promise<string> {
    const key = `output-schemas/${conversationSegment(conversationId)}.json`;
    try {
      await this.blobs.put(key, JSON.stringify(schema));
    } catch (error) {
      // A retried start of the same workflow stores the same schema; a conflict means another body is there, which we keep.
      if (!isBlobConflictError(error)) throw error;
    }
    return key;
  }

  /** The `final_output` tool spec for a stored schema. */
  async spec(schemaKey: string): Promise<ToolSpec> {
    const { schema } = await this.load(schemaKey);
    return { name: finalOutputToolName, description: finalOutputToolDescription, inputSchema: schema };
  }

  /** Validates one call's arguments. */
  async check(schemaKey: string, value: JsonObject): Promise<FinalOutputResult> {
    const size = JSON.stringify(value).length;
    if (size > maxStructuredOutputChars) {
      const errors = [`(top level): the result is ${size} characters of JSON; at most ${maxStructuredOutputChars} are accepted, so make it shorter`];
      return { content: finalOutputRejected(errors), isError: true, finalOutput: { valid: false, errors } };
    }
    const { validate } = await this.load(schemaKey);
    const errors = validate(value);
    if (errors.length > 0) return { content: finalOutputRejected(errors), isError: true, finalOutput: { valid: false, errors } };
    return { content: finalOutputAccepted, isError: false, finalOutput: { valid: true, value } };
  }

  private async load(schemaKey: string): Promise<{ schema: JsonObject; validate: (value: unknown) => string[] }> {
    const cached = this.compiled.get(schemaKey);
    if (cached) return cached;
    const body = await this.blobs.get(schemaKey);
    if (body === undefined) {
      throw ApplicationFailure.create({ type: FailureType.blobMissing, message: `the output schema ${schemaKey} is missing from the blob store`, nonRetryable: true });
    }
    const schema = JSON.parse(body) as JsonObject; // written by storeSchema from a checked schema
    const entry = { schema, validate: outputValidator(schema) };
    if (this.compiled.size >= maxCachedSchemas) {
      const oldest = this.compiled.keys().next().value;
      if (oldest !== undefined) this.compiled.delete(oldest);
    }
    this.compiled.set(schemaKey, entry);
    return entry;
  }
}
