// The failure module alone: the package's index brings its payload converters and protobuf definitions,
// which the API's Lambda bundle (it reads provider settings through this layer) leaves out (decision 0026).
import { ApplicationFailure } from '@temporalio/common/lib/failure';
import { FailureType } from '../contracts/failures';

/**
 * Failures the model layer raises itself (as opposed to provider errors, which `classifyModelError`
 * reads). They are Temporal ApplicationFailures with a stable type, so an activity can let them
 * propagate unchanged and a workflow can match on the type.
 */

/** A model route names a provider or model that is not configured, or a provider's configuration is unusable. */
export function modelNotConfiguredFailure(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: FailureType.modelNotConfigured, message, nonRetryable: true });
}

/** The model answered something unusable (e.g. tool-call arguments that are not a JSON object). */
export function modelBadResponseFailure(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: FailureType.modelBadResponse, message, nonRetryable: true });
}

/** A scripted model ran out of script: a test bug, never retried. */
export function scriptExhaustedFailure(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: FailureType.scriptExhausted, message, nonRetryable: true });
}

/** A model request asks for something the model cannot take (e.g. an unknown reasoning effort): never retried. */
export function invalidModelRequestFailure(message: string): ApplicationFailure {
  return ApplicationFailure.create({ type: FailureType.invalidInput, message, nonRetryable: true });
}
