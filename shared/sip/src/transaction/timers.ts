/**
 * RFC 3261 §17 timer table (Appendix A, Table 4) plus RFC 6026 Timers L/M. Base values are
 * configurable (a LAN deployment may lower T1); everything else derives from them as the RFC says.
 */
export const T1 = 500; // RFC 3261 §17.1.1.1: RTT estimate
export const T2 = 4000; // RFC 3261 §17.1.2.2: max retransmit interval for non-INVITE requests and INVITE responses
export const T4 = 5000; // RFC 3261 §17.1.2.2: max time a message remains in the network
export const TIMER_D_UNRELIABLE = 32_000; // RFC 3261 §17.1.1.2: "at least 32 seconds" for unreliable transports

export interface TimerConfig {
  T1: number;
  T2: number;
  T4: number;
  /** Timer D for unreliable transports; defaults to max(32 s, 64*T1). */
  D?: number;
}

export const DEFAULT_TIMERS: Readonly<TimerConfig> = Object.freeze({ T1, T2, T4 });

/** Concrete durations for one transaction; zero means "fire immediately" (reliable transports). */
export interface TimerValues {
  /** INVITE client: initial retransmit interval (doubles without cap), undefined on reliable transports. */
  A: number | undefined;
  /** INVITE client: transaction timeout while Calling. */
  B: number;
  /** INVITE client: wait for response retransmissions in Completed. */
  D: number;
  /** non-INVITE client: initial retransmit interval (doubles up to T2), undefined on reliable transports. */
  E: number | undefined;
  /** non-INVITE client: transaction timeout. */
  F: number;
  /** INVITE server: initial final-response retransmit interval (doubles up to T2), undefined if reliable. */
  G: number | undefined;
  /** INVITE server: wait for ACK. */
  H: number;
  /** INVITE server: absorb ACK retransmissions in Confirmed. */
  I: number;
  /** non-INVITE server: absorb request retransmissions in Completed. */
  J: number;
  /** non-INVITE client: absorb response retransmissions in Completed. */
  K: number;
  /** INVITE server, RFC 6026 §8.7: absorb INVITE retransmissions after a 2xx (Accepted). */
  L: number;
  /** INVITE client, RFC 6026 §8.4: keep forwarding 2xx retransmissions to the TU (Accepted). */
  M: number;
  T2: number;
}

export function resolveTimers(partial?: Partial<TimerConfig>): TimerConfig {
  const cfg: TimerConfig = {
    T1: partial?.T1 ?? T1,
    T2: partial?.T2 ?? T2,
    T4: partial?.T4 ?? T4,
  };
  if (partial?.D !== undefined) cfg.D = partial.D;
  for (const [k, v] of Object.entries(cfg)) {
    if (!Number.isFinite(v) || v <= 0) throw new RangeError(`SIP timer ${k} must be a positive number of ms`);
  }
  return cfg;
}

/** Table 4 of RFC 3261 for one transport. */
export function timerValues(cfg: TimerConfig, reliable: boolean): TimerValues {
  const t64 = 64 * cfg.T1;
  return {
    A: reliable ? undefined : cfg.T1, // §17.1.1.2: "If an unreliable transport is being used"
    B: t64,
    D: reliable ? 0 : (cfg.D ?? Math.max(TIMER_D_UNRELIABLE, t64)), // §17.1.1.2
    E: reliable ? undefined : cfg.T1, // §17.1.2.2
    F: t64,
    G: reliable ? undefined : cfg.T1, // §17.2.1
    H: t64,
    I: reliable ? 0 : cfg.T4, // §17.2.1
    J: reliable ? 0 : t64, // §17.2.2
    K: reliable ? 0 : cfg.T4, // §17.1.2.2
    L: t64, // RFC 6026 §8.7
    M: t64, // RFC 6026 §8.4
    T2: cfg.T2,
  };
}
