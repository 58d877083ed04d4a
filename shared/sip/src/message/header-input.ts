import { SipHeaders } from './headers.ts';

/** Headers as the app writes them: a SipHeaders, `{ Name: value | [values] }`, or `[name, value]` pairs. */
export type HeaderInput =
  | SipHeaders
  | Readonly<Record<string, string | number | readonly string[]>>
  | Iterable<readonly [string, string]>;

/** Normalises the app's header forms to ordered `[name, value]` pairs. */
export function headerEntries(input: HeaderInput | undefined): Array<[string, string]> {
  if (input === undefined) return [];
  if (input instanceof SipHeaders) return input.entries().map(([n, v]) => [n, v]);
  if (Array.isArray(input)) return pairsOf(input as readonly (readonly [string, string])[]);
  if (Symbol.iterator in input) return [...(input as Iterable<readonly [string, string]>)].map(([n, v]) => [n, v]);
  const out: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(input as Record<string, string | number | readonly string[]>)) {
    if (Array.isArray(value)) for (const v of value as readonly string[]) out.push([name, v]);
    else out.push([name, String(value)]);
  }
  return out;
}

/**
 * An array of pairs copied by index, each pair that is an array too (what handlers pass: a REGISTER's 200,
 * issue 11); the spread and the destructuring by iterator otherwise, as for any iterable.
 */
function pairsOf(input: readonly (readonly [string, string])[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i < input.length; i++) {
    const pair = input[i] as readonly [string, string];
    if (Array.isArray(pair)) out.push([pair[0], pair[1]]);
    else {
      const [n, v] = pair;
      out.push([n, v]);
    }
  }
  return out;
}

export function toBody(body: Buffer | string | undefined): Buffer {
  if (body === undefined) return Buffer.alloc(0);
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
}
