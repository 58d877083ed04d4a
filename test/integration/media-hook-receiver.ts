/**
 * The platform side of ZLM hooks for integration tests: an HTTP server answering
 * `POST /vms/webhook/:hook` with @vms/media's pure hook handler, recording every result. Stands in
 * for the signaling service's webhook plugin, which does the same around the same handler.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHookHandler, type HookHandlerOptions, type HookResult, type MediaHookEvent } from '@vms/media';
import { waitFor } from '@vms/harness';

const PREFIX = '/vms/webhook/';

export type EventOf<K extends MediaHookEvent['kind']> = Extract<MediaHookEvent, { kind: K }>;

export interface HookReceiver {
  /** `http://127.0.0.1:PORT/vms/webhook` */
  readonly baseUrl: string;
  readonly results: HookResult[];
  /** Resolves with the first accepted event of that kind matching `pred`, waiting up to `timeoutMs`. */
  waitForEvent<K extends MediaHookEvent['kind']>(kind: K, pred?: (e: EventOf<K>) => boolean, timeoutMs?: number): Promise<EventOf<K>>;
  /** Accepted events of that kind so far. */
  events<K extends MediaHookEvent['kind']>(kind: K): Array<EventOf<K>>;
  close(): Promise<void>;
}

export async function startHookReceiver(opts: Omit<HookHandlerOptions, 'lookupNode'> & { nodes: Record<string, string> }): Promise<HookReceiver> {
  const handle = createHookHandler({ ...opts, lookupNode: (id) => (Object.hasOwn(opts.nodes, id) ? { secret: opts.nodes[id]! } : undefined) });
  const results: HookResult[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://receiver');
      if (req.method !== 'POST' || !url.pathname.startsWith(PREFIX)) {
        res.writeHead(404).end();
        return;
      }
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = undefined;
      }
      const r = handle(url.pathname.slice(PREFIX.length), body, Object.fromEntries(url.searchParams));
      results.push(r);
      res.writeHead(r.httpStatus, { 'content-type': 'application/json' }).end(JSON.stringify(r.reply));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const events = <K extends MediaHookEvent['kind']>(kind: K): Array<EventOf<K>> =>
    results.flatMap((r) => (r.ok && r.event.kind === kind ? [r.event as EventOf<K>] : []));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/vms/webhook`,
    results,
    events,
    waitForEvent: (kind, pred = () => true, timeoutMs = 5000) =>
      waitFor(() => events(kind).find(pred), { timeoutMs, description: `hook ${kind}` }),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
