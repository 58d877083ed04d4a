/**
 * CIDR matching for gray-release conditions on the source address, IPv4 and IPv6, without allocation per
 * check beyond parsing the address. An IPv4-mapped IPv6 address (::ffff:a.b.c.d, what a dual-stack socket
 * reports) matches IPv4 ranges.
 */
import { isIPv4, isIPv6 } from 'node:net';

export interface Cidr {
  readonly v6: boolean;
  /** 4 or 16 bytes, masked. */
  readonly bytes: Uint8Array;
  readonly bits: number;
}

function v4Bytes(s: string): Uint8Array {
  return Uint8Array.from(s.split('.').map(Number));
}

function v6Bytes(s: string): Uint8Array {
  let text = s;
  let tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    tail = [...v4Bytes(text.slice(lastColon + 1))];
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const hs = head === '' ? [] : head.split(':');
  const rs = rest === undefined || rest === '' ? [] : rest.split(':');
  const groups = rest === undefined ? hs : [...hs, ...Array<string>(8 - hs.length - rs.length).fill('0'), ...rs];
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    const v = parseInt(g, 16);
    out[i * 2] = v >> 8;
    out[i * 2 + 1] = v & 0xff;
  });
  if (tail.length === 4) out.set(tail, 12);
  return out;
}

/** An address as bytes (4 for IPv4 and IPv4-mapped IPv6, 16 otherwise), or undefined if not an address. */
export function addressBytes(addr: string): Uint8Array | undefined {
  const bare = addr.startsWith('[') && addr.endsWith(']') ? addr.slice(1, -1) : addr;
  if (isIPv4(bare)) return v4Bytes(bare);
  if (!isIPv6(bare)) return undefined;
  const b = v6Bytes(bare.split('%')[0]!);
  const mapped = b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;
  return mapped ? b.slice(12) : b;
}

export function parseCidr(s: string): Cidr | undefined {
  const slash = s.indexOf('/');
  const addr = slash < 0 ? s : s.slice(0, slash);
  const v6 = isIPv6(addr);
  if (!v6 && !isIPv4(addr)) return undefined;
  const max = v6 ? 128 : 32;
  const bitsText = slash < 0 ? String(max) : s.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bitsText)) return undefined;
  const bits = Number(bitsText);
  if (bits > max) return undefined;
  const bytes = v6 ? v6Bytes(addr) : v4Bytes(addr);
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    bytes[i]! &= (0xff << (8 - keep)) & 0xff;
  }
  return { v6, bytes, bits };
}

export function cidrContains(c: Cidr, addr: Uint8Array): boolean {
  if (addr.length !== c.bytes.length) return false;
  for (let i = 0; i < addr.length; i++) {
    const keep = Math.max(0, Math.min(8, c.bits - i * 8));
    if (keep === 0) return true;
    if ((addr[i]! & ((0xff << (8 - keep)) & 0xff)) !== c.bytes[i]) return false;
  }
  return true;
}
