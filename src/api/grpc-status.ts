/** Whether `error` is a gRPC error with status `code` (e.g. 3 INVALID_ARGUMENT, 5 NOT_FOUND), as the Temporal client throws them. */
export function isGrpcStatus(error: unknown, code: number): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === code;
}
