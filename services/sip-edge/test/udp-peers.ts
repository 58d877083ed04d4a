// Loopback UDP peers for the edge's end-to-end tests (edge.test.ts, edge-overload.test.ts): device and
// shard sockets on OS ports, the next datagram one receives, and a shard's stateless 200.
import dgram from 'node:dgram';

/** Sockets bound on 127.0.0.1, closed together by closeAll (the suite's `after`). */
export function createSocketPool(): { socket(): Promise<dgram.Socket>; closeAll(): void } {
  const sockets: dgram.Socket[] = [];
  return {
    async socket() {
      const s = dgram.createSocket('udp4');
      await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
      sockets.push(s);
      return s;
    },
    closeAll() {
      for (const s of sockets.splice(0)) s.close();
    },
  };
}

/** The next datagram `s` receives, as latin1 text; rejects after `ms`. */
export const nextMessage = (s: dgram.Socket, ms = 2000): Promise<string> =>
  new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('no datagram')), ms);
    s.once('message', (d) => {
      clearTimeout(t);
      resolve(d.toString('latin1'));
    });
  });

/** A shard answering every request 200 with its Via lines, as a stateless UAS does. */
export function answer200(req: string): string {
  const lines = req.slice(0, req.indexOf('\r\n\r\n')).split('\r\n');
  const keep = lines.filter((l) => /^(Via|From|To|Call-ID|CSeq):/.test(l)).map((l) => (l.startsWith('To:') ? `${l};tag=s` : l));
  return `SIP/2.0 200 OK\r\n${keep.join('\r\n')}\r\nContent-Length: 0\r\n\r\n`;
}
