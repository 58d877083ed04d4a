// Prometheus metrics of one signaling instance (docs/metrics.md lists them). Everything here
// subscribes: SIP traffic to @vms/sip's diagnostics channels, store round trips to @vms/cluster's,
// forwards / API failures / catalog syncs to ./channels.ts, device uplinks to the device events;
// gauges read their value at scrape time. No label carries an id: methods, statuses, codes and
// results come from fixed sets (labels.ts), so the number of series is bounded whatever devices send.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { STORE_CHANNELS, type StoreCommandEvent, type StoreConnectionErrorEvent } from '@vms/cluster';
import { getCSeq, SIP_CHANNELS, type DatagramAnswerEvent, type DroppedEvent, type MessageInEvent, type MessageOutEvent, type SipMessage, type TransactionTimeoutEvent } from '@vms/sip';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { ErrorCode } from '../errors/catalog.ts';
import type { DeviceEvents, UplinkKind } from '../events/device-events.ts';
import { ENVELOPE_BY_ERROR } from '../http/errors.ts';
import { SIGNALING_CHANNELS, type ApiFailureEvent, type CatalogSyncEvent, type ForwardEvent, type SessionRecoveryEvent } from './channels.ts';
import { hotCounter, hotHistogram, type Cell } from './hot-metrics.ts';
import { methodLabel, registrationResult, statusLabel } from './labels.ts';

export interface MetricsSources {
  readonly instanceId: string;
  readonly version: string;
  readonly events: DeviceEvents;
  /** Devices this instance holds (cluster: its own leases; alone: every online device). */
  readonly devicesOnline: () => number | Promise<number>;
  /** Whether this instance is the cascade leader (CASC-1). */
  readonly isLeader: () => boolean;
  /** Live media streams and sessions on this instance; null without a media side. */
  readonly media: () => { readonly streams: number; readonly sessions: number } | null;
  /** Node.js process metrics (event-loop lag, heap, GC, CPU). Default true. */
  readonly defaultMetrics?: boolean;
}

export interface Metrics {
  readonly contentType: string;
  /** The exposition text (Prometheus text format 0.0.4). */
  render(): Promise<string>;
  /** Unsubscribes everything. Idempotent. */
  close(): void;
}

/**
 * Node.js process metrics, one registry per process: collectDefaultMetrics starts an event-loop delay
 * monitor and a GC observer that are never stopped, so several instances in one process (tests) share
 * them; each scrape merges them into the instance's own metrics.
 */
let processMetrics: Registry | null = null;
function processRegistry(): Registry {
  if (processMetrics === null) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics });
  }
  return processMetrics;
}

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Labelled children made once per label set: the label values are bounded, so is this map. */
function childrenOf<T>(make: (...values: string[]) => T): (...values: string[]) => T {
  const made = new Map<string, T>();
  return (...values) => {
    const key = values.join('\u0000');
    let child = made.get(key);
    if (child === undefined) {
      child = make(...values);
      made.set(key, child);
    }
    return child;
  };
}

const cseqMethod = (msg: SipMessage): string => {
  try {
    return methodLabel(getCSeq(msg).method);
  } catch {
    return 'other';
  }
};

export function createMetrics(s: MetricsSources): Metrics {
  const registry = new Registry();
  const registers = [registry];
  const withProcess = s.defaultMetrics !== false;
  if (withProcess) processRegistry();

  new Gauge({ name: 'vms_instance_info', help: 'This signaling instance (value 1): its node code and version', labelNames: ['instance_id', 'version'], registers }).set(
    { instance_id: s.instanceId, version: s.version },
    1,
  );
  new Gauge({
    name: 'vms_devices_online',
    help: 'Devices online on this instance (the devices it owns)',
    registers,
    async collect() {
      this.set(await s.devicesOnline());
    },
  });
  new Gauge({
    name: 'vms_cascade_leader',
    help: '1 while this instance is the cascade leader (SPEC CASC-1), else 0',
    registers,
    collect() {
      this.set(s.isLeader() ? 1 : 0);
    },
  });
  const mediaGauge = (name: string, help: string, pick: (m: { streams: number; sessions: number }) => number): void => {
    new Gauge({
      name,
      help,
      registers,
      collect() {
        const m = s.media();
        this.set(m === null ? 0 : pick(m));
      },
    });
  };
  mediaGauge('vms_media_streams', 'Live media streams (one per channel played) held by this instance', (m) => m.streams);
  mediaGauge('vms_media_sessions', 'Media sessions (viewers, playbacks, downloads) on this instance', (m) => m.sessions);

  // Device uplinks: the keepalive path only increments a child bound here.
  const uplinks = hotCounter({
    name: 'vms_device_uplinks_total',
    help: 'Requests from registered devices, by kind (keepalive, register, unregister, message)',
    labelNames: ['kind'],
    registers,
  });
  const byKind: Record<UplinkKind, Cell> = {
    register: uplinks('register'),
    keepalive: uplinks('keepalive'),
    message: uplinks('message'),
    unregister: uplinks('unregister'),
  };
  const offUplink = s.events.on('uplink', (e) => void byKind[e.kind].value++);

  // SIP traffic by method and status.
  const request = hotCounter({ name: 'vms_sip_requests_total', help: 'SIP requests received (in) and sent (out), by method', labelNames: ['direction', 'method'], registers });
  const response = hotCounter({
    name: 'vms_sip_responses_total',
    help: 'SIP responses received (in) and sent (out), by CSeq method and status',
    labelNames: ['direction', 'method', 'status'],
    registers,
  });
  const registration = hotCounter({ name: 'vms_sip_registrations_total', help: 'Final answers to device REGISTERs, by result', labelNames: ['result'], registers });
  const parseErrors = new Counter({ name: 'vms_sip_parse_errors_total', help: 'Inbound SIP messages that did not parse', registers });
  const dropped = new Counter({ name: 'vms_sip_dropped_total', help: 'Inbound SIP messages or connections dropped, by reason', labelNames: ['reason'], registers });
  const txTimeouts = new Counter({ name: 'vms_sip_transaction_timeouts_total', help: 'Client transactions that got no final response, by method', labelNames: ['method'], registers });
  // the datagram shortcut's common case, bound once: a keepalive MESSAGE answered 200
  const messageIn = request('in', 'MESSAGE');
  const message200Out = response('out', 'MESSAGE', '200');
  // a registration's counts (its second leg in, the 401 and the 200 out), bound at first use: a lookup by
  // labels joins them and hashes the key, ~1k instructions a count, five counts a registration (issue 11)
  let registerIn: Cell | undefined;
  let register200Out: Cell | undefined;
  let register401Out: Cell | undefined;
  let registrationAccepted: Cell | undefined;
  let registrationChallenged: Cell | undefined;
  const count = (direction: 'in' | 'out', msg: SipMessage): void => {
    if (msg.type === 'request') {
      if (direction === 'in' && msg.method === 'REGISTER') (registerIn ??= request('in', 'REGISTER')).value++;
      else request(direction, methodLabel(msg.method)).value++;
      return;
    }
    const method = cseqMethod(msg);
    if (direction === 'out' && method === 'REGISTER' && msg.status === 200) {
      (register200Out ??= response('out', 'REGISTER', '200')).value++;
      (registrationAccepted ??= registration('accepted')).value++;
      return;
    }
    response(direction, method, statusLabel(msg.status)).value++;
    if (direction === 'out' && method === 'REGISTER') {
      const result = registrationResult(msg.status);
      if (result !== null) registration(result).value++;
    }
  };

  // Forwards and API failures (owner routing, SPEC §4).
  const forwardOutcome = hotHistogram({
    name: 'vms_forward_duration_seconds',
    help: 'Requests forwarded to the owning instance, by outcome (ok = the owner answered; else the code the caller got)',
    labelNames: ['outcome'],
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const apiFailures = new Counter({ name: 'vms_api_failures_total', help: 'Error envelopes answered to API callers, by code (4601-4605: routing)', labelNames: ['code'], registers });
  const codeOf = (errorCode: string): string => String(ENVELOPE_BY_ERROR[errorCode as ErrorCode]?.code ?? 'other');
  const apiFailure = childrenOf((code) => apiFailures.labels(code ?? ''));

  // Stores (SPEC FAIL-3, FAIL-4).
  const storeCommand = hotHistogram({
    name: 'vms_store_command_duration_seconds',
    help: 'Redis commands and MySQL statements (through the pools), by store and outcome',
    labelNames: ['store', 'outcome'],
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const storeErrors = new Counter({ name: 'vms_store_errors_total', help: 'Failed Redis commands / MySQL statements and Redis connection errors, by store and kind', labelNames: ['store', 'kind'], registers });
  const storeError = childrenOf((store, kind) => storeErrors.labels(store ?? '', kind ?? ''));

  // Catalog syncs.
  const syncsInFlight = new Gauge({ name: 'vms_catalog_syncs_in_flight', help: 'Catalog syncs waiting for their devices', registers });
  const syncs = new Counter({ name: 'vms_catalog_syncs_total', help: 'Catalog syncs finished, by result', labelNames: ['result'], registers });
  const syncItems = new Counter({ name: 'vms_catalog_items_received_total', help: 'Channels stored by finished catalog syncs', registers });

  // Session continuity (SPEC §11): orphaned sessions by outcome and reason (constant texts of recovery-decision.ts).
  const recoveries = new Counter({ name: 'vms_session_recovery_total', help: 'Orphaned sessions of crashed instances, by outcome (recovered, released, forgotten) and reason', labelNames: ['outcome', 'reason'], registers });

  const handlers: [string, (message: unknown) => void][] = [
    [SIP_CHANNELS.messageIn, (m) => count('in', (m as MessageInEvent).message)],
    [SIP_CHANNELS.messageOut, (m) => count('out', (m as MessageOutEvent).message)],
    [
      SIP_CHANNELS.datagramAnswer,
      (m) => {
        const e = m as DatagramAnswerEvent;
        if (e.method === 'MESSAGE' && e.status === 200) {
          messageIn.value++;
          message200Out.value++;
          return;
        }
        if (e.method === 'REGISTER' && e.status === 401) {
          // the first leg's challenge (register-challenge.ts)
          (registerIn ??= request('in', 'REGISTER')).value++;
          (register401Out ??= response('out', 'REGISTER', '401')).value++;
          (registrationChallenged ??= registration('challenged')).value++;
          return;
        }
        request('in', methodLabel(e.method)).value++;
        response('out', methodLabel(e.method), statusLabel(e.status)).value++;
        if (e.method === 'REGISTER') {
          // the first leg's 401 and the shedder's 503 are answered from the datagram (register-admission.ts)
          const result = registrationResult(e.status);
          if (result !== null) registration(result).value++;
        }
      },
    ],
    [SIP_CHANNELS.parseError, () => parseErrors.inc()],
    [SIP_CHANNELS.dropped, (m) => dropped.labels((m as DroppedEvent).reason).inc()],
    [SIP_CHANNELS.transactionTimeout, (m) => txTimeouts.labels(methodLabel((m as TransactionTimeoutEvent).method)).inc()],
    [
      SIGNALING_CHANNELS.forward,
      (m) => {
        const e = m as ForwardEvent;
        forwardOutcome(e.errorCode === null ? 'ok' : codeOf(e.errorCode)).observe(e.seconds);
      },
    ],
    [
      SIGNALING_CHANNELS.sessionRecovery,
      (m) => {
        const e = m as SessionRecoveryEvent;
        recoveries.labels(e.outcome, e.reason).inc();
      },
    ],
    [SIGNALING_CHANNELS.apiFailure, (m) => apiFailure(codeOf((m as ApiFailureEvent).errorCode)).inc()],
    [
      STORE_CHANNELS.command,
      (m) => {
        const e = m as StoreCommandEvent;
        storeCommand(e.store, e.ok ? 'ok' : 'error').observe(e.seconds);
        if (!e.ok) storeError(e.store, 'command').inc();
      },
    ],
    [STORE_CHANNELS.connectionError, (m) => storeError((m as StoreConnectionErrorEvent).store, 'connection').inc()],
    [
      SIGNALING_CHANNELS.catalogSync,
      (m) => {
        const e = m as CatalogSyncEvent;
        if (e.phase === 'started') {
          syncsInFlight.inc();
          return;
        }
        syncsInFlight.dec();
        syncs.labels(e.phase).inc();
        if (e.items > 0) syncItems.inc(e.items);
      },
    ],
  ];
  for (const [name, handler] of handlers) subscribe(name, handler);

  let closed = false;
  return {
    contentType: registry.contentType,
    // merged at each scrape: the process registry is shared, ours is this instance's
    render: () => (withProcess ? Registry.merge([processRegistry(), registry]) : registry).metrics(),
    close() {
      if (closed) return;
      closed = true;
      for (const [name, handler] of handlers) unsubscribe(name, handler);
      offUplink();
      registry.clear();
    },
  };
}
