// A device INVITE dialog to and from its snapshot form (SPEC §11 RECOVER): RFC 3261 §12 state as text, parsed
// back with the SIP package's own parsers (a snapshot read from Redis is untrusted input).
import { formatNameAddr, formatUri, parseNameAddr, parseUri, type Dialog, type DialogState, type Flow } from '@vms/sip';
import type { SavedDialog } from '../recovery/session-snapshot.ts';

export function saveDialog(d: Dialog): SavedDialog {
  const s = d.snapshot;
  const flow: Flow | undefined = d.flow;
  return {
    callId: s.callId,
    localTag: s.localTag,
    remoteTag: s.remoteTag,
    local: formatNameAddr(s.local),
    remote: formatNameAddr(s.remote),
    localSeq: s.localSeq,
    remoteSeq: s.remoteSeq,
    routeSet: s.routeSet.map(formatNameAddr),
    remoteTarget: formatUri(s.remoteTarget),
    transport: flow?.transport ?? 'udp',
    remoteAddress: flow?.remoteAddress ?? s.remoteTarget.host,
    remotePort: flow?.remotePort ?? s.remoteTarget.port ?? 5060,
  };
}

/**
 * The INVITE dialog state of a snapshot — ours as UAC (device dialogs) or as UAS (an upstream's INVITE, cascade);
 * throws the SIP parser's error on a bad name-addr or URI.
 */
export function dialogStateOf(saved: SavedDialog, role: DialogState['role'] = 'uac'): DialogState {
  return {
    kind: 'invite',
    role,
    callId: saved.callId,
    localTag: saved.localTag,
    remoteTag: saved.remoteTag,
    local: parseNameAddr(saved.local),
    remote: parseNameAddr(saved.remote),
    localSeq: saved.localSeq,
    remoteSeq: saved.remoteSeq,
    routeSet: saved.routeSet.map((r) => parseNameAddr(r)),
    remoteTarget: parseUri(saved.remoteTarget),
    secure: false,
  };
}
