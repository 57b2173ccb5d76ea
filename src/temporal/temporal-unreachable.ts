/**
 * Temporal could not be reached when the SDK's client connected: nothing answers at the address, or not in
 * time. Made by the connect (src/api/temporal-sdk-connect.ts) from whatever the SDK threw, which differs
 * by build (the SDK's `ServiceError` under tsx, grpc-js's plain `Error` in the bundle), so callers test one
 * class: the API answers 503, never 500. The message names the address and the setting that gave it.
 */
export class TemporalUnreachableError extends Error {
  override readonly name = 'TemporalUnreachableError';
  constructor(
    message: string,
    /** The address the client tried (host:port). */
    readonly address: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
