// Parameter patterns of the control API's schemas and the words a refusal uses for each. The readers
// (params.ts) trim values, so every pattern allows spaces around the value. No imports:
// http/errors.ts reads `problemOf` without depending on the schemas.

export const GB_ID_PATTERN = '^\\s*\\d{20}\\s*$';
export const SESSION_ID_PATTERN = '^\\s*[A-Za-z0-9_-]{1,64}\\s*$';
export const SERIAL_PATTERN = '^\\s*[0-9A-Za-z_-]{1,64}\\s*$'; // same set as session ids, spelled apart: the map below keys on the text
/** core/gb-time.ts's PATTERN, around spaces the reader trims; the reader still checks the calendar. */
export const TIME_PATTERN = '^\\s*\\d{4}-\\d{2}-\\d{2}[T ]\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?(Z|[+-]\\d{2}:?\\d{2})?\\s*$';

/** Tenant ids (auth/principal.ts TENANT_ID) in a query, around spaces the reader trims; '' = absent. */
export const OPTIONAL_TENANT_ID_PATTERN = '^\\s*([A-Za-z0-9_-]{1,12})?\\s*$';
/** A device id prefix (device search), around spaces the reader trims; '' = absent. */
export const OPTIONAL_ID_PREFIX_PATTERN = '^\\s*(\\d{1,20})?\\s*$';
/** Ids the store hands out (routing rules): 1-15 digits, no leading zero. */
export const POSITIVE_ID_PATTERN = '^\\s*[1-9]\\d{0,14}\\s*$';

/** Decimal integers (the reader checks the range and names it). */
export const INT_PATTERN = '^\\s*-?\\d{1,10}\\s*$';
export const OPTIONAL_INT_PATTERN = '^\\s*(-?\\d{1,10})?\\s*$';

/**
 * The problem text of a pattern failure, the same words as the handlers' readers (params.ts) use, so a
 * refused value reads the same whether the schema or the handler caught it.
 */
export const PATTERN_PROBLEMS: ReadonlyMap<string, string> = new Map([
  [GB_ID_PATTERN, 'must be a 20-digit code'],
  [SESSION_ID_PATTERN, 'must be a session id from a start call'],
  [SERIAL_PATTERN, 'must be a query serial number'],
  [INT_PATTERN, 'must be an integer'],
  [OPTIONAL_INT_PATTERN, 'must be an integer'],
  [TIME_PATTERN, 'must be ISO-8601 or yyyy-MM-dd HH:mm:ss'],
  [OPTIONAL_TENANT_ID_PATTERN, 'must be 1-12 characters of A-Z a-z 0-9 _ -'],
  [POSITIVE_ID_PATTERN, 'must be a positive integer'],
  [OPTIONAL_ID_PREFIX_PATTERN, 'must be 1-20 digits'],
]);

/** `^(?:|[Ll][Ee][Ff][Tt]|…)$`: the readers lower-case enumerated values, so any case is accepted. */
export function anyCasePattern(values: readonly string[], optional: boolean): string {
  const alt = values.map((v) => [...v].map((c) => (/[a-z]/i.test(c) ? `[${c.toUpperCase()}${c.toLowerCase()}]` : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join(''));
  return `^\\s*(?:${optional ? '|' : ''}${alt.join('|')})\\s*$`;
}

const ANY_CASE = /^\^\\s\*\(\?:(.*)\)\\s\*\$$/;

/** The words for a pattern failure: the table above, the values of an `anyCasePattern`, else null. */
export function problemOf(pattern: string): string | null {
  const known = PATTERN_PROBLEMS.get(pattern);
  if (known !== undefined) return known;
  const m = ANY_CASE.exec(pattern);
  if (m === null) return null;
  const values = (m[1] ?? '').split('|').filter((v) => v !== '').map((v) => v.replace(/\[(.)(.)\]/g, '$2').replace(/\\(.)/g, '$1'));
  return `must be one of ${values.join(', ')}`;
}
