// Where a ZLM hook is handled (pure; media-hooks.ts gathers the facts and does the I/O). ZLM posts
// every hook to one URL, often a load balancer in front of all instances, so a hook about a stream
// may land on an instance that does not hold it. The stream's holder must see it: it ends the stream
// on no-reader / RTP timeout (BYE to the device, closeRtpServer, SSRC release) and its answer is the
// one ZLM must get (e.g. on_stream_none_reader `close`).
//
//  - node-level hooks (keepalive, server started) are handled where they land: every instance keeps
//    its own view of node health (API probes fill in for keepalives that went elsewhere);
//  - a hook forwarded by another instance (marker + right secret) runs here and is never forwarded
//    again; a marker without the right secret is refused;
//  - a stream held here runs here; a stream held elsewhere is forwarded to its holder when the
//    forwarding channel is open and the holder is online; otherwise (no holder known, standalone,
//    store down, holder offline) it runs here, where the answer is that of a stream nobody holds.
import type { MediaHookEvent } from '@vms/media';
import type { InboundKind } from '../cluster/route-decision.ts';

export interface HookStreamRef {
  readonly nodeId: string;
  readonly streamId: string;
}

/** The stream a hook is about (GB28181 streams live under app `rtp`), or null for node-level hooks. */
export function hookStream(event: MediaHookEvent): HookStreamRef | null {
  switch (event.kind) {
    case 'stream_changed':
    case 'stream_none_reader':
    case 'publish':
      return event.app === 'rtp' ? { nodeId: event.mediaServerId, streamId: event.stream } : null;
    case 'rtp_server_timeout':
      return { nodeId: event.mediaServerId, streamId: event.streamId };
    default:
      return null;
  }
}

/** What the directory said about the stream's holder. */
export type HolderLookup = { readonly kind: 'holder'; readonly node: string } | { readonly kind: 'none' } | { readonly kind: 'unavailable' };

export type HookRoute =
  | { readonly action: 'refuse' }
  | { readonly action: 'local'; readonly why: 'forwarded' | 'node-level' | 'held-here' | 'standalone' | 'no-holder' | 'store-unavailable' | 'forwarding-closed' }
  | { readonly action: 'lookup' }
  | { readonly action: 'forward'; readonly holder: string };

/** Before any I/O: refuse, run here, or look the holder up. */
export function routeHookFirst(f: {
  readonly inbound: InboundKind;
  readonly stream: HookStreamRef | null;
  readonly heldHere: boolean;
  /** false standalone (no shared directory). */
  readonly clustered: boolean;
}): HookRoute {
  if (f.inbound === 'forged') return { action: 'refuse' };
  if (f.inbound === 'forwarded') return { action: 'local', why: 'forwarded' };
  if (f.stream === null) return { action: 'local', why: 'node-level' };
  if (f.heldHere) return { action: 'local', why: 'held-here' };
  if (!f.clustered) return { action: 'local', why: 'standalone' };
  return { action: 'lookup' };
}

/** After the holder lookup. */
export function routeHookToHolder(self: string, lookup: HolderLookup, forwardingOpen: boolean): HookRoute {
  if (lookup.kind === 'unavailable') return { action: 'local', why: 'store-unavailable' };
  if (lookup.kind === 'none' || lookup.node === self) return { action: 'local', why: 'no-holder' };
  if (!forwardingOpen) return { action: 'local', why: 'forwarding-closed' };
  return { action: 'forward', holder: lookup.node };
}
