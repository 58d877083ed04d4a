// Catalog sync per device (SPEC §12 `POST|GET /vms/device/catalog/sync`): one query at a time per
// device (a second POST joins the running one), progress readable while MESSAGEs arrive, the result
// stored when the answer is complete (replacing the channel list) or when the wait ends with part of it
// (added to the stored channels, nothing deleted, progress flagged `partial`).
//
// A store that refuses the write for a passing reason (StorageError: MySQL over its statement deadline,
// a deadlock, a restart) gets the same answer again a few times before the sync is called failed: the
// answer is in memory, and losing it to a two-second hiccup would leave the device without channels
// until someone asks again (SPEC FAIL-4, "bad input loses nothing").
import { buildCatalogQuery } from '@vms/gb28181';
import type { Logger } from 'pino';
import type { CatalogProgress } from '../control/device-control.port.ts';
import type { Channel, ChannelInput, DeviceId } from '../devices/device.types.ts';
import { DeviceOfflineError, StorageError } from '../errors/catalog.ts';
import { publishCatalogSync } from '../metrics/channels.ts';
import { DEFAULT_DEVICE_LIMITS } from './device-admission.ts';
import { createCatalogAssembly, type CatalogAnswer, type CatalogAssembly } from './catalog-assembler.ts';
import { diffChannels, readAllChannels, readReportedChannels } from './catalog-changes.ts';
import { channelsFromItems } from './catalog-channels.ts';
import type { DeviceSession } from './device-flows.ts';
import type { DeviceSideDeps } from './device-side.types.ts';
import type { PendingQueries } from './pending-queries.ts';
import type { QueryTimeouts } from './query-timeouts.ts';
import { toCatalogError } from './sip-status.ts';

export interface CatalogSyncs {
  /** Starts a sync (or joins the running one); resolves once the device accepted the query. */
  start(deviceId: DeviceId): Promise<CatalogProgress>;
  progress(deviceId: DeviceId): CatalogProgress;
  /** Waits for running syncs to settle (PendingQueries.close() rejects their waits). */
  close(): Promise<void>;
}

export interface CatalogSyncDeps {
  readonly side: DeviceSideDeps;
  readonly pending: PendingQueries;
  /** Sends a body to the device; rejects with a catalog error. */
  readonly send: (session: DeviceSession, targetId: string, body: Buffer, operation: string) => Promise<void>;
  readonly timeouts: QueryTimeouts;
  /** Waits before each new attempt to store an answer the store refused (StorageError); default STORE_RETRY_MS. */
  readonly storeRetryMs?: readonly number[];
}

/** Three more attempts over 4.25 s: longer than one MySQL statement deadline and the gate's probe after it. */
export const STORE_RETRY_MS: readonly number[] = [250, 1000, 3000];

interface SyncState {
  state: CatalogProgress['state'];
  startedAt: number;
  finishedAt: number | null;
  total: number | null;
  received: number;
  partial: boolean;
  error: string | null;
  /** While running: the live assembly, for progress. */
  assembly: CatalogAssembly | null;
  task: Promise<void> | null;
}

const OPERATION = 'catalog query';

export function createCatalogSyncs(d: CatalogSyncDeps): CatalogSyncs {
  const { side } = d;
  const syncs = new Map<DeviceId, SyncState>();
  const retryMs = d.storeRetryMs ?? STORE_RETRY_MS;
  const pause = (ms: number): Promise<void> => new Promise((resolve) => side.clock.setTimeout(resolve, ms));

  const view = (deviceId: DeviceId, s: SyncState | undefined): CatalogProgress => {
    if (s === undefined) {
      return { deviceId, state: 'idle', total: null, received: 0, startedAt: null, finishedAt: null, partial: false, error: null };
    }
    const live = s.assembly;
    return {
      deviceId,
      state: s.state,
      total: live?.total ?? s.total,
      received: live?.received ?? s.received,
      startedAt: s.startedAt,
      finishedAt: s.finishedAt,
      partial: s.partial,
      error: s.error,
    };
  };

  /** Writes the answer; returns the channels stored before it (for the change events). */
  const write = async (deviceId: DeviceId, answer: CatalogAnswer, channels: ChannelInput[], now: number): Promise<Channel[]> => {
    // a complete answer needs every stored channel (DELs), once per sync; a partial one only its own
    const listening = side.events.hasListeners('catalogChanged');
    const stored = !listening ? [] : answer.complete ? await readAllChannels(side.devices, deviceId) : await readReportedChannels(side.devices, deviceId, channels);
    if (answer.complete) await side.devices.replaceChannels(deviceId, channels, now);
    else await side.devices.upsertChannels(deviceId, channels, now);
    return stored;
  };

  const store = async (deviceId: DeviceId, answer: CatalogAnswer, s: SyncState, log: Logger): Promise<void> => {
    const channels = await channelsFromItems(answer.items);
    const now = side.clock.now();
    let stored: Channel[];
    for (let attempt = 0; ; attempt++) {
      try {
        stored = await write(deviceId, answer, channels, now);
        break;
      } catch (err) {
        const wait = retryMs[attempt];
        if (!(err instanceof StorageError) || wait === undefined) throw err;
        log.warn({ err, attempt: attempt + 1, retryInMs: wait }, 'catalog answer not stored, trying again');
        await pause(wait);
      }
    }
    Object.assign(s, { state: 'done', finishedAt: side.clock.now(), total: answer.total, received: channels.length, partial: !answer.complete, assembly: null });
    const changes = diffChannels(stored, channels, answer.complete);
    const removed = changes.filter((c) => c.event === 'DEL').map((c) => c.channelId);
    publishCatalogSync('done', channels.length);
    side.events.emit('catalogChanged', { deviceId, at: now, source: 'sync', complete: answer.complete, channels, removed, changes });
    log.info({ channels: channels.length, total: answer.total, complete: answer.complete }, 'catalog sync finished');
  };

  const failed = (s: SyncState, err: unknown, log: Logger): void => {
    const message = err instanceof Error ? err.message : String(err);
    Object.assign(s, { state: 'failed', finishedAt: side.clock.now(), error: message, assembly: null });
    publishCatalogSync('failed');
    log.info({ reason: message }, 'catalog sync failed');
  };

  return {
    async start(deviceId) {
      const running = syncs.get(deviceId);
      if (running?.state === 'running') return view(deviceId, running);
      const session = side.flows.get(deviceId);
      if (session === undefined) throw new DeviceOfflineError(deviceId);
      const log = side.log.child({ deviceId });
      const assembly = createCatalogAssembly((side.limits ?? DEFAULT_DEVICE_LIMITS).maxChannelsPerDevice);
      const s: SyncState = { state: 'running', startedAt: side.clock.now(), finishedAt: null, total: null, received: 0, partial: false, error: null, assembly, task: null };
      syncs.set(deviceId, s);
      publishCatalogSync('started');
      const handle = d.pending.open({
        deviceId,
        cmdType: 'Catalog',
        operation: OPERATION,
        firstTimeoutMs: d.timeouts.catalogFirstMs,
        nextTimeoutMs: d.timeouts.catalogNextMs,
        maxTotalMs: d.timeouts.catalogMaxMs,
        assembly,
      });
      s.task = handle.result.then(
        (answer) => store(deviceId, answer, s, log).catch((err: unknown) => failed(s, err, log)),
        (err: unknown) => failed(s, err, log),
      );
      log.info({ sn: handle.sn }, 'catalog sync started');
      try {
        await d.send(session, deviceId, buildCatalogQuery({ sn: String(handle.sn), deviceId }, { charset: session.charset }), OPERATION);
      } catch (err) {
        d.pending.fail(handle.sn, toCatalogError(err));
        await s.task;
        throw err;
      }
      return view(deviceId, s);
    },

    progress: (deviceId) => view(deviceId, syncs.get(deviceId)),

    async close() {
      await Promise.all([...syncs.values()].map((s) => s.task ?? Promise.resolve()));
    },
  };
}
