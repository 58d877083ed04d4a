import type { NetworkInterfaceInfo } from 'node:os';

export type InterfaceTable = NodeJS.Dict<NetworkInterfaceInfo[]>;

/** SPEC §2 default SIP host: the first non-loopback IPv4 address, else 127.0.0.1. */
export function firstNonLoopbackIPv4(interfaces: InterfaceTable): string {
  for (const name of Object.keys(interfaces).sort()) {
    for (const info of interfaces[name] ?? []) {
      // Node < 18.4 reported family as the number 4.
      const isV4 = info.family === 'IPv4' || (info.family as unknown) === 4;
      if (isV4 && !info.internal && !info.address.startsWith('127.')) return info.address;
    }
  }
  return '127.0.0.1';
}
