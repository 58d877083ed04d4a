// What the media sessions need from the device side: an INVITE dialog to one channel of a device this
// instance owns, and the in-dialog requests on it. Domain types only (no SIP objects cross this port).
import type { SavedDialog } from '../recovery/session-snapshot.ts';

export interface InviteRequest {
  readonly deviceId: string;
  readonly channelId: string;
  /** SDP offer text. */
  readonly sdp: string;
  /** GB/T 28181-2016 §9.2 Subject header value (buildSubject). */
  readonly subject: string;
}

export interface MediaDialog {
  readonly callId: string;
  /** The device's SDP answer. */
  readonly answer: Buffer;
  /** INFO with a MANSRTSP body (Annex B); resolves with the SIP status. */
  info(body: string): Promise<number>;
  /** BYE (once; later calls resolve at once). */
  bye(): Promise<void>;
  /** Called once when the device ends the dialog (its BYE, or the dialog failed). */
  onEnded(listener: (reason: string) => void): void;
  /** The RFC 3261 §12 state now (CSeqs advance with INFO), for the session snapshot (SPEC §11). */
  saved(): SavedDialog;
  /** Forgets the dialog here without a BYE: another instance took it over (SPEC §11, the device moved). */
  drop(): void;
}

export interface MediaSignaling {
  /**
   * Sends the INVITE through the device's flow and resolves on 2xx (the ACK is sent by then). Rejects
   * with DeviceOfflineError (not registered here), DeviceRejectedError (non-2xx), DeviceTimeoutError.
   */
  invite(req: InviteRequest): Promise<MediaDialog>;
  /**
   * A dialog another instance set up (its snapshot, SPEC §11), reaching the device through the flow it has now
   * registered on here; null when the device is not registered here or the saved state does not parse.
   */
  restore(deviceId: string, saved: SavedDialog): MediaDialog | null;
}
