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
  if (Symbol.iterator in input) return [...(input as Iterable<readonly [string, string]>)].map(([n, v]) => [n, v]);
  const out: Array<[string, string]> = [];
  for (const [name, value] of Object.entries(input as Record<string, string | number | readonly string[]>)) {
    if (Array.isArray(value)) for (const v of value as readonly string[]) out.push([name, v]);
    else out.push([name, String(value)]);
  }
  return out;
}

export function toBody(body: Buffer | string | undefined): Buffer {
  if (body === undefined) return Buffer.alloc(0);
  return typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
}
