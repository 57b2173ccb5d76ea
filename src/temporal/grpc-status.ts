/**
 * The gRPC status an error carries, wherever it sits: the Temporal client wraps gRPC errors (a
 * `ServiceError` whose cause has the code, sometimes one more level down), and the API's HTTP start throws
 * its own error with the code. One walker for every caller that decides by status code.
 */

/** Common gRPC status codes, by name. */
export const GrpcCode = {
  cancelled: 1,
  unknown: 2,
  invalidArgument: 3,
  deadlineExceeded: 4,
  notFound: 5,
  alreadyExists: 6,
  resourceExhausted: 8,
  failedPrecondition: 9,
  aborted: 10,
  outOfRange: 11,
  unavailable: 14,
  dataLoss: 15,
} as const;

/** How far down the cause chain a status is looked for (the SDK nests it at most two levels down). */
const maxCauseDepth = 4;

/**
 * The first gRPC status code on `error` or its causes, with that error's text (gRPC `details` and the
 * message, which Temporal uses for its refusals); undefined when there is none.
 */
export function grpcStatusOf(error: unknown): { code: number; text: string } | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < maxCauseDepth && typeof current === 'object' && current !== null; depth += 1) {
    const { code, details, message, cause } = current as { code?: unknown; details?: unknown; message?: unknown; cause?: unknown };
    // Node's system errors have string codes (ECONNREFUSED): only a number is a gRPC status.
    if (typeof code === 'number') return { code, text: `${typeof details === 'string' ? details : ''} ${typeof message === 'string' ? message : ''}`.trim() };
    current = cause;
  }
  return undefined;
}

/** Whether `error` (or a cause) is a gRPC error with status `code` (e.g. 3 INVALID_ARGUMENT, 5 NOT_FOUND). */
export function isGrpcStatus(error: unknown, code: number): boolean {
  return grpcStatusOf(error)?.code === code;
}
