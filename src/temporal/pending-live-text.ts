import { asLiveText, type LiveText } from '../contracts/live-text';

/**
 * The text-so-far of a pending model call, read from a describe answer of Temporal's HTTP API (its
 * `pendingActivities`): the last heartbeat value of the `modelTurn` activity, if it is of the attempt that
 * runs now. The API's gateway and `errand peek` read describe JSON with different payload forms (raw and
 * shorthand), so each passes its own decoder of a Payloads message. src/observability/live-text-reader.ts
 * reads the same from the SDK's describe.
 */
export function pendingLiveText(description: Record<string, unknown>, decodePayloads: (payloads: unknown) => unknown[]): LiveText | undefined {
  const pending = Array.isArray(description.pendingActivities) ? (description.pendingActivities as unknown[]) : [];
  for (const activity of pending) {
    if (!isRecord(activity) || !isRecord(activity.activityType) || activity.activityType.name !== 'modelTurn') continue;
    let values: unknown[];
    try {
      values = decodePayloads(activity.heartbeatDetails);
    } catch {
      continue;
    }
    if (values.length === 0) continue;
    const live = asLiveText(values[values.length - 1]);
    if (!live) continue;
    const attempt = typeof activity.attempt === 'number' ? activity.attempt : undefined;
    if (live.attempt !== undefined && attempt !== undefined && live.attempt !== attempt) continue;
    return { ...live, ...(attempt === undefined ? {} : { attempt }) };
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
