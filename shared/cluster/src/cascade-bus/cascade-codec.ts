/**
 * JSON encoding of cascade events, and the strict reader every receiver runs before a handler sees
 * an event (see cascade-event.ts for the format rules).
 */
import {
  CASCADE_CATALOG_EVENTS,
  CASCADE_EVENT_KINDS,
  CASCADE_EVENT_VERSION,
  MAX_CASCADE_MESSAGE_BYTES,
  type CascadeEvent,
  type CascadeEventKind,
} from './cascade-event.ts';

/** Why a received message was dropped. Stable strings: logs and metrics key on them. */
export type CascadeDecodeFailure = 'too-large' | 'json' | 'envelope' | 'version' | 'kind' | 'payload';

export type CascadeDecodeResult =
  | { readonly ok: true; readonly event: CascadeEvent }
  | { readonly ok: false; readonly reason: CascadeDecodeFailure; readonly detail: string };

export function encodeCascadeEvent(event: CascadeEvent): string {
  return JSON.stringify(event);
}

export function decodeCascadeEvent(message: string): CascadeDecodeResult {
  if (Buffer.byteLength(message, 'utf8') > MAX_CASCADE_MESSAGE_BYTES) return fail('too-large', `over ${MAX_CASCADE_MESSAGE_BYTES} bytes`);
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return fail('json', 'not JSON');
  }
  if (!isRecord(value)) return fail('envelope', 'not an object');
  if (value['v'] !== CASCADE_EVENT_VERSION) return fail('version', `version ${JSON.stringify(value['v'])}`);
  const { id, origin, at, kind, payload } = value;
  if (!isNonEmpty(id) || !isNonEmpty(origin) || typeof at !== 'number' || !Number.isFinite(at)) {
    return fail('envelope', 'id, origin and at are required');
  }
  if (typeof kind !== 'string' || !(CASCADE_EVENT_KINDS as readonly string[]).includes(kind)) return fail('kind', `kind ${JSON.stringify(kind)}`);
  const problem = payloadProblem(kind as CascadeEventKind, payload);
  if (problem !== null) return fail('payload', `${kind}: ${problem}`);
  return { ok: true, event: value as unknown as CascadeEvent };
}

/** null when the payload has what its kind requires, else what is wrong. */
function payloadProblem(kind: CascadeEventKind, p: unknown): string | null {
  if (!isRecord(p)) return 'payload is not an object';
  switch (kind) {
    case 'notify.catalog': {
      if (typeof p['event'] !== 'string' || !(CASCADE_CATALOG_EVENTS as readonly string[]).includes(p['event'])) return 'bad event';
      if (!isNonEmpty(p['deviceId'])) return 'deviceId required';
      const channel = p['channel'];
      if (!isRecord(channel) || !isNonEmpty(channel['deviceId'])) return 'channel.deviceId required';
      return null;
    }
    case 'notify.alarm': {
      if (!isNonEmpty(p['deviceId'])) return 'deviceId required';
      const alarm = p['alarm'];
      if (!isRecord(alarm)) return 'alarm required';
      return stringFields(alarm, ['deviceId', 'alarmPriority', 'alarmMethod'], ['alarmTime', 'alarmDescription', 'longitude', 'latitude', 'alarmType', 'eventType']);
    }
    case 'notify.mobilePosition': {
      if (!isNonEmpty(p['deviceId'])) return 'deviceId required';
      const pos = p['position'];
      if (!isRecord(pos)) return 'position required';
      return stringFields(pos, ['deviceId', 'time', 'longitude', 'latitude'], ['speed', 'direction', 'altitude']);
    }
    case 'control.upstream': {
      if (!isNonEmpty(p['platformId']) || !isNonEmpty(p['targetDeviceId'])) return 'platformId and targetDeviceId required';
      const request = p['request'];
      if (!isNonEmpty(request) || !/^[A-Za-z0-9+/]+={0,2}$/.test(request)) return 'request must be base64';
      return null;
    }
    case 'response.upstream': {
      if (!isNonEmpty(p['platformId']) || !isNonEmpty(p['deviceId']) || !isNonEmpty(p['cmdType'])) return 'platformId, deviceId and cmdType required';
      const response = p['response'];
      if (!isRecord(response) || !isNonEmpty(response['sn'])) return 'response with its sn required';
      return null;
    }
  }
}

function stringFields(o: Record<string, unknown>, required: readonly string[], optional: readonly string[]): string | null {
  for (const k of required) if (!isNonEmpty(o[k])) return `${k} required`;
  for (const k of optional) if (o[k] !== undefined && typeof o[k] !== 'string') return `${k} must be a string`;
  return null;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isNonEmpty(v: unknown): v is string {
  return typeof v === 'string' && v !== '';
}

function fail(reason: CascadeDecodeFailure, detail: string): CascadeDecodeResult {
  return { ok: false, reason, detail };
}
