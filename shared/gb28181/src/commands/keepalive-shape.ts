/**
 * A device's keepalive body with its two values left out: a device sends the same Keepalive Notify every
 * minute but for its SN (GB/T 28181-2016 §9.6), so once scanKeepalive has read one of its bodies by the
 * usual-shape regex, the next ones are checked against the same text around the SN and the DeviceID —
 * a few native `indexOf` calls that match where they start and a digit loop — instead of the regex
 * (~2.5k instructions per keepalive under callgrind, the largest step of the keepalive handler after the
 * head; docs/benchmarks.md).
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
  /** @internal keepaliveShapeOf() makes them (one per distinct shape). */
  constructor(
    /** From the body's first char to the SN's value (`…<SN>`). */
    readonly head: string,
    /** From the SN's end to the DeviceID's value (`</SN>…<DeviceID>`). */
    readonly mid: string,
    /** From the DeviceID's end to the body's end (`</DeviceID>…</Notify>…`). */
    readonly tail: string,
    /** What scanKeepalive reports for a body of this shape. */
    readonly charset: ManscdpCharset,
  ) {}

  /**
   * Whether `text` from `start` to its end is this shape with an SN of 1-20 digits and `deviceId` (the id
   * this shape was made for by keepaliveShapeOf): then scanKeepalive reads it with this charset.
   */
  matches(text: string, start: number, deviceId: string): boolean {
    const end = text.length;
    if (end - start > KEEPALIVE_SCAN_MAX_CHARS || text.indexOf(this.head, start) !== start) return false;
    const sn = start + this.head.length;
    let i = sn;
    while (i < end) {
      const c = text.charCodeAt(i);
      if (c < 48 || c > 57) break;
      i++;
    }
    if (i === sn || i - sn > USUAL_MAX_SN || text.indexOf(this.mid, i) !== i) return false;
    i += this.mid.length;
    if (text.indexOf(deviceId, i) !== i) return false;
    i += deviceId.length;
    return end - i === this.tail.length && text.indexOf(this.tail, i) === i;
  }
}

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
  const key = `${head}\u0000${mid}\u0000${tail}`;
  const known = shapes.get(key);
  if (known !== undefined) return known;
  if (shapes.size >= MAX_SHAPES) return undefined;
  const shape = new KeepaliveShape(flat(head), flat(mid), flat(tail), m[1] === 'GB2312' ? 'GB2312' : 'UTF-8');
  shapes.set(flat(key), shape);
  return shape;
}
