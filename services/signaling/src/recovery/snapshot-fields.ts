// Field readers shared by the snapshot formats (device sessions, audio sessions, upstream views): a snapshot
// read back from Redis is input like any other, so each field is checked and the first bad one is named.
export class SnapshotFormatError extends Error {
  readonly code = 'SNAPSHOT_ERR_FORMAT';
  constructor(readonly field: string, reason: string) {
    super(`session snapshot: ${field} ${reason}`);
    this.name = 'SnapshotFormatError';
  }
}

export type SnapshotObject = Record<string, unknown>;

export function failField(field: string, why: string): never {
  throw new SnapshotFormatError(field, why);
}

export function objectField(v: unknown, field: string): SnapshotObject {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) failField(field, 'is not an object');
  return v as SnapshotObject;
}

/** `o[k]` as a string matching `re` (a bounded token). */
export function tokenField(o: SnapshotObject, k: string, re: RegExp, field = k): string {
  const v = o[k];
  if (typeof v !== 'string' || !re.test(v)) failField(field, 'is not a bounded token');
  return v;
}

export function intField(o: SnapshotObject, k: string, min: number, max: number, field = k): number {
  const v = o[k];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) failField(field, `is not an integer in ${min}..${max}`);
  return v;
}

/** `s` as JSON of at most `maxBytes`. */
export function serializeBounded(s: unknown, maxBytes: number): string {
  const text = JSON.stringify(s);
  if (Buffer.byteLength(text) > maxBytes) failField('snapshot', `longer than ${maxBytes} bytes`);
  return text;
}

/** The JSON object in `input` (at most `maxBytes`), fields not read yet. */
export function parseBoundedObject(input: string, maxBytes: number): SnapshotObject {
  if (input.length > maxBytes) failField('snapshot', `longer than ${maxBytes} bytes`);
  let raw: unknown;
  try {
    raw = JSON.parse(input);
  } catch {
    failField('snapshot', 'is not JSON');
  }
  return objectField(raw, 'snapshot');
}
