// Wiring of session continuity for voice talk and broadcast (GB/T 28181 §9.12; SPEC §11): the journal of the audio
// dialogs this instance accepts (Redis, key prefix vms:audio-rec:, same atomic snapshot + index + tombstone scripts
// as the device media dialogs) and the recovery of those a crashed or left owner held (audio-recovery.ts), driven
// by the same node-table reads and device registrations. Only with Redis and vms.recovery.enabled: a standalone
// instance has nobody to hand its sessions to.
import type { RedisClient } from '@vms/cluster';
import type { SipStack } from '@vms/sip';
import { nanoid } from 'nanoid';
import type { Logger } from 'pino';
import type { NodeTableReadResult } from '../cluster/node-tracker.ts';
import type { Config } from '../config/config.types.ts';
import type { Clock } from '../core/clock.ts';
import type { DeviceEvents } from '../events/device-events.ts';
import type { MediaPlane } from '../media/media-plane.ts';
import { snapshotTtlMs, ZLM_API_TIMEOUT_MS } from '../media/media-wiring.ts';
import { publishSessionRecovery } from '../metrics/channels.ts';
import type { DeviceFlows } from '../sip/device-flows.ts';
import type { AudioSender, SipBroadcast } from '../sip/sip-broadcast.ts';
import { createAudioRecovery, type AudioRecovery } from './audio-recovery.ts';
import { AUDIO_SNAPSHOT_CODEC, type AudioSnapshot } from './audio-snapshot.ts';
import type { MediaView } from './recovery-decision.ts';
import { createSessionJournal, type SessionJournal } from './session-journal.ts';
import { createRedisSnapshotStore } from './session-snapshots.redis.ts';

export const AUDIO_SNAPSHOT_PREFIX = 'vms:audio-rec:';

export interface AudioContinuityDeps {
  readonly config: Config;
  readonly redis: RedisClient | null;
  readonly stack: Pick<SipStack, 'restoreDialog'>;
  readonly flows: Pick<DeviceFlows, 'get'>;
  readonly events: DeviceEvents;
  readonly plane: Pick<MediaPlane, 'node' | 'client' | 'callResult'>;
  /** OWN-1; absent (standalone): every device registered here. */
  readonly ownedHere?: (deviceId: string) => boolean;
  /** The device's Notify/Broadcast + INVITE wait (sip-broadcast.ts), bounding one re-establishment. */
  readonly inviteWaitMs: number;
  readonly clock: Clock;
  readonly log: Logger;
}

export interface AudioContinuity {
  /** For SipBroadcast: null when no continuity. */
  readonly journal: SessionJournal<AudioSnapshot> | null;
  /** Starts the recovery, which re-establishes sessions through `audio`. */
  start(audio: Pick<SipBroadcast, 'start' | 'busy'>, sender: AudioSender): void;
  onNodeRead(read: NodeTableReadResult): void;
  /** Idempotent; the journal keeps its snapshots (to be recovered). */
  close(): Promise<void>;
}

export function openAudioContinuity(d: AudioContinuityDeps): AudioContinuity {
  const off: AudioContinuity = { journal: null, start: () => undefined, onNodeRead: () => undefined, close: async () => undefined };
  if (d.redis === null || !d.config.recovery.enabled) return off;
  const store = createRedisSnapshotStore(d.redis, AUDIO_SNAPSHOT_PREFIX, AUDIO_SNAPSHOT_CODEC);
  const self = d.config.sip.instanceId;
  const journal = createSessionJournal<AudioSnapshot>({ store, holder: self, run: nanoid(), ttlMs: snapshotTtlMs(d.config), clock: d.clock, log: d.log });
  const log = d.log.child({ component: 'audio-recovery' });
  let recovery: AudioRecovery | null = null;
  let offOnline: (() => void) | null = null;

  const probe = async (nodeId: string, app: string, stream: string): Promise<MediaView> => {
    const node = d.plane.node(nodeId);
    if (node === undefined) return { kind: 'absent' }; // a node no longer configured holds nothing of ours
    try {
      const list = await d.plane.client(node).getMediaList({ app, stream });
      d.plane.callResult(node.id, null);
      if (list.length === 0) return { kind: 'absent' };
      return { kind: 'present', readers: Math.max(...list.map((m) => Math.max(m.totalReaderCount, m.readerCount))) };
    } catch (err) {
      d.plane.callResult(node.id, err);
      log.warn({ err, nodeId, app, stream }, 'media node not asked about an orphaned audio session: next scan');
      return { kind: 'unreachable' };
    }
  };

  return {
    journal,
    start(audio, sender) {
      if (recovery !== null) return;
      const r = createAudioRecovery({
        store,
        self,
        run: journal.run,
        audio,
        stopSending: (source, ssrc) => sender.stop(source, ssrc),
        probe,
        stack: d.stack,
        flowOf: (deviceId) => d.flows.get(deviceId)?.flow,
        ownedHere: d.ownedHere ?? (() => true),
        giveUpMs: Math.round(d.config.recovery.giveUpSec * 1000),
        scanPeriodMs: Math.round(d.config.sip.nodeHeartbeatIntervalSec * 1000),
        // one recovery: two media node calls, the Notify and the device's INVITE, with room to spare
        lockTtlMs: d.inviteWaitMs + 3 * ZLM_API_TIMEOUT_MS + 10_000,
        clock: d.clock,
        log: d.log,
        onOutcome: (o) => publishSessionRecovery({ outcome: o.outcome, reason: o.outcome === 'recovered' ? 'audio' : `audio: ${o.reason}` }),
      });
      recovery = r;
      offOnline = d.events.on('online', () => r.scanSoon());
      r.start();
    },
    onNodeRead(read) {
      if (read.ok) recovery?.setGoneHolders(read.rows.filter((r) => !r.online).map((r) => r.code));
    },
    async close() {
      offOnline?.();
      offOnline = null;
      await recovery?.close();
      await journal.close();
    },
  };
}
