/**
 * A device's keepalive body with its two values left out: a device sends the same Keepalive Notify every
 * minute but for its SN (GB/T 28181-2016 §9.6), so once scanKeepalive has read one of its bodies by the
 * usual-shape regex, the next ones are checked against the same text around the SN and the DeviceID —
 * one regex of literals and the id's search — instead of the usual-shape regex with its classes,
 * alternatives and captures (2.7k instructions per keepalive under callgrind against ~2k;
 * docs/benchmarks.md).
 *
 * The same verdict as scanKeepalive: a shape is made only from a body that the usual-shape regex read
 * (its SN and DeviceID captures are where the shape's holes are), and a body matches only when it is
 * that body with an SN of 1-20 digits and the given DeviceID, which must be one the regex's DeviceID class
 * took (the caller passes the id the shape was made for). Such a body is read by the same regex with
 * the same declaration, Status and whitespace: the same charset, Status and DeviceID, its own SN.
 */
import type { ManscdpCharset } from '../charset.ts';
import { KEEPALIVE_SCAN_MAX_CHARS, matchUsualKeepalive, USUAL_MAX_SN } from './keepalive-scan.ts';

export class KeepaliveShape {
  /** head, 1-20 digits, mid, idLength id chars, tail, the end: every char but the holes' a literal. */
  readonly #pattern: RegExp;
  /** @internal keepaliveShapeOf() makes them (one per distinct shape). */
  constructor(
    /** From the body's first char to the SN's value (`…<SN>`). */
    readonly head: string,
    /** From the SN's end to the DeviceID's value (`</SN>…<DeviceID>`). */
    readonly mid: string,
    /** The DeviceID's length (the id itself is the caller's). */
    readonly idLength: number,
    /** From the DeviceID's end to the body's end (`</DeviceID>…</Notify>…`). */
    readonly tail: string,
    /** What scanKeepalive reports for a body of this shape. */
    readonly charset: ManscdpCharset,
  ) {
    this.#pattern = new RegExp(`${literal(head)}[0-9]{1,${USUAL_MAX_SN}}${literal(mid)}[A-Za-z0-9]{${idLength}}${literal(tail)}$`, 'y');
  }

  /**
   * Whether `text` from `start` to its end is this shape with an SN of 1-20 digits and `deviceId` (the id
   * this shape was made for by keepaliveShapeOf): then scanKeepalive reads it with this charset. One
   * compiled match of literals (`test`: no result array) and one native search for the id where it must
   * be: fewer calls than a search per piece, each of which costs ~0.5k instructions whatever its length.
   */
  matches(text: string, start: number, deviceId: string): boolean {
    const end = text.length;
    if (end - start > KEEPALIVE_SCAN_MAX_CHARS || deviceId.length !== this.idLength) return false;
    this.#pattern.lastIndex = start;
    if (!this.#pattern.test(text)) return false;
    const id = end - this.tail.length - deviceId.length;
    return text.indexOf(deviceId, id) === id;
  }
}

/** `s` as a pattern matching exactly `s` (every syntax character escaped; CR, LF, NUL stand for themselves). */
const literal = (s: string): string => s.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');

/** The shapes seen, one object each (a fleet's models write a handful); bounded, beyond it no new ones. */
const shapes = new Map<string, KeepaliveShape>();
const MAX_SHAPES = 256;

/** A flat copy: a slice of the datagram's text would keep the whole datagram alive with the shape. */
const flat = (s: string): string => Buffer.from(s, 'latin1').toString('latin1');

/**
 * The shape of the body in `text` from `start`, when the usual-shape regex reads it with DeviceID
 * `deviceId`; undefined otherwise (another shape, another id, or MAX_SHAPES shapes already seen).
 */
export function keepaliveShapeOf(text: string, start: number, deviceId: string): KeepaliveShape | undefined {
  if (text.length - start > KEEPALIVE_SCAN_MAX_CHARS) return undefined;
  const m = matchUsualKeepalive(text, start);
  if (m === null || m[3] !== deviceId) return undefined;
  const snAt = text.indexOf('<SN>', start) + '<SN>'.length;
  const snEnd = snAt + (m[2] as string).length;
  const idAt = text.indexOf('<DeviceID>', snEnd) + '<DeviceID>'.length;
  const idEnd = idAt + deviceId.length;
  // the regex's groups are the first `<SN>` and the `<DeviceID>` after it (nothing before them can hold one)
  if (text.slice(snAt, snEnd) !== m[2] || text.slice(idAt, idEnd) !== deviceId) return undefined;
  const head = text.slice(start, snAt);
  const mid = text.slice(snEnd, idAt);
  const tail = text.slice(idEnd);
  const key = `${head}\u0000${mid}\u0000${deviceId.length}\u0000${tail}`;
  const known = shapes.get(key);
  if (known !== undefined) return known;
  if (shapes.size >= MAX_SHAPES) return undefined;
  const shape = new KeepaliveShape(flat(head), flat(mid), deviceId.length, flat(tail), m[1] === 'GB2312' ? 'GB2312' : 'UTF-8');
  shapes.set(flat(key), shape);
  return shape;
}
