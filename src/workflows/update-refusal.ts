import { ApplicationFailure } from '@temporalio/workflow';
import type { FailureTypeName } from '../contracts/failures';

/**
 * An update validator's refusal, typed (decision 0041): the API maps the type to its answer (ended or not
 * taken: 409, bad input: 422, queue full: 429) and shows the message. Validators run only for new updates,
 * never in replay, so a refusal adds no command.
 */
export function updateRefusal(type: FailureTypeName, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true });
}
