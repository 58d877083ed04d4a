/**
 * After a statement timed out, MySQL is suspect: for one statement timeout from then, a single statement
 * at a time may try (the probe) and the others are refused at once. Without it, a request that reads the
 * database twice in a row (resolve a channel's device, then its tenant) waits twice the statement timeout
 * while the server does not answer (SIGSTOP, a partition); with it, every request answers within one
 * statement timeout (SPEC SEC-3: ≤ 3 s). Any answer, an error included, means the server is back. Pure: time
 * is passed in.
 */
export type GateAdmission = 'go' | 'probe' | 'refuse';

export class StatementGate {
  readonly #windowMs: number;
  #suspectUntil = Number.NEGATIVE_INFINITY;
  #probing = false;

  constructor(windowMs: number) {
    this.#windowMs = windowMs;
  }

  get suspect(): boolean {
    return this.#suspectUntil !== Number.NEGATIVE_INFINITY;
  }

  admit(now: number): GateAdmission {
    if (now >= this.#suspectUntil) return 'go';
    if (this.#probing) return 'refuse';
    this.#probing = true;
    return 'probe';
  }

  /** The server answered (a result or an error of its own). */
  answered(admission: GateAdmission): void {
    if (admission === 'probe') this.#probing = false;
    this.#suspectUntil = Number.NEGATIVE_INFINITY;
  }

  /** The statement (or the wait for a connection) ran out of time. */
  timedOut(now: number, admission: GateAdmission): void {
    if (admission === 'probe') this.#probing = false;
    this.#suspectUntil = now + this.#windowMs;
  }
}
