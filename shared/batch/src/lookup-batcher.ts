// Coalesces point lookups by key into batched fetches (issue 11: a registration storm on the survivors
// of a dead shard cost the shared MariaDB one statement per device and lookup; the per-statement
// overhead was a third of its CPU and the bounded pool's queue overflowed).
//
// No timer and no tick: a lookup arriving while fewer than `maxInFlight` batches are being fetched goes
// at once, as a batch of one, so an idle store answers as fast as before. Lookups arriving while the
// batches are busy wait, and go together in the next batch when one returns: batches grow exactly with
// the load, and the statements per second stay near `maxInFlight` / round trip. (Coalescing the lookups
// of one tick would gain nothing here: each SIP datagram is its own callback, with the microtasks
// drained between them, so one tick holds one device's lookup.)
//
// A key asked twice while waiting is fetched once and answers both callers. A key asked while a batch
// holding it is in flight waits for the next batch instead of joining it: that batch may have read
// before the caller's own write (a registration, then its read) and would answer with the older row.
//
// Bounded (SPEC SEC-3): at most `maxBatch` keys per fetch (more waiting go in the following batches),
// `maxInFlight` fetches at once, `maxQueued` callers waiting; one more is refused at once with
// LookupQueueFullError, whose `code` the caller chooses (the MySQL stores use the pool's own "queue
// full" code, which every store already reads as "unavailable, try later").

export interface LookupBatcherOptions<K, V> {
  /** Reads the values of distinct keys (at most maxBatch). A key missing from the map gets `absent(key)`. */
  readonly fetch: (keys: readonly K[]) => Promise<ReadonlyMap<K, V>>;
  /** The value of a key the fetch did not find (null, an empty list, a default). */
  readonly absent: (key: K) => V;
  /** Keys per fetch at most; default 500. */
  readonly maxBatch?: number;
  /** Fetches at once at most; default 2 (a slow batch does not hold every other lookup). */
  readonly maxInFlight?: number;
  /** Callers waiting for a batch at most (not counting those in flight); default 10,000. */
  readonly maxQueued?: number;
  /** `code` of the LookupQueueFullError; default 'VMS_LOOKUP_QUEUE_FULL'. */
  readonly queueFullCode?: string;
}

export const DEFAULT_LOOKUP_BATCH = 500;
export const DEFAULT_LOOKUP_BATCHES_IN_FLIGHT = 2;
export const DEFAULT_LOOKUPS_QUEUED = 10_000;

/** The lookup was not queued: `maxQueued` callers already wait. */
export class LookupQueueFullError extends Error {
  constructor(
    queued: number,
    readonly code: string,
  ) {
    super(`${queued} lookups already wait for a batch`);
    this.name = 'LookupQueueFullError';
  }
}

export interface LookupBatcher<K, V> {
  /** The key's value, read in a batch with the other keys asked meanwhile. */
  load(key: K): Promise<V>;
  /** Callers waiting for a batch (not those in flight). */
  readonly queued: number;
  /** Fetches running. */
  readonly inFlight: number;
}

interface Caller<V> {
  readonly resolve: (v: V) => void;
  readonly reject: (err: unknown) => void;
}

const positiveInteger = (name: string, v: number): number => {
  if (!Number.isInteger(v) || v < 1) throw new RangeError(`${name} must be a positive integer, not ${v}`);
  return v;
};

export function createLookupBatcher<K, V>(o: LookupBatcherOptions<K, V>): LookupBatcher<K, V> {
  const maxBatch = positiveInteger('maxBatch', o.maxBatch ?? DEFAULT_LOOKUP_BATCH);
  const maxInFlight = positiveInteger('maxInFlight', o.maxInFlight ?? DEFAULT_LOOKUP_BATCHES_IN_FLIGHT);
  const maxQueued = positiveInteger('maxQueued', o.maxQueued ?? DEFAULT_LOOKUPS_QUEUED);
  const queueFullCode = o.queueFullCode ?? 'VMS_LOOKUP_QUEUE_FULL';
  /** Waiting keys in arrival order, each with its callers. */
  const waiting = new Map<K, Caller<V>[]>();
  let queued = 0;
  let inFlight = 0;

  /** The oldest maxBatch waiting keys, taken off the queue. */
  const takeBatch = (): Map<K, Caller<V>[]> => {
    const batch = new Map<K, Caller<V>[]>();
    for (const [key, callers] of waiting) {
      if (batch.size === maxBatch) break;
      batch.set(key, callers);
      waiting.delete(key);
      queued -= callers.length;
    }
    return batch;
  };

  // An async function runs up to its first await at once: the fetch starts in the caller's turn, and
  // a fetch that throws instead of rejecting fails its batch like a rejection.
  const fetchBatch = async (batch: Map<K, Caller<V>[]>): Promise<void> => {
    try {
      const found = await o.fetch([...batch.keys()]);
      for (const [key, callers] of batch) {
        const value = found.has(key) ? (found.get(key) as V) : o.absent(key);
        for (const c of callers) c.resolve(value);
      }
    } catch (err) {
      for (const callers of batch.values()) for (const c of callers) c.reject(err);
    }
  };

  const pump = (): void => {
    while (inFlight < maxInFlight && waiting.size > 0) {
      inFlight++;
      void fetchBatch(takeBatch()).finally(() => {
        inFlight--;
        pump();
      });
    }
  };

  return {
    load(key) {
      if (queued >= maxQueued) return Promise.reject(new LookupQueueFullError(queued, queueFullCode));
      return new Promise<V>((resolve, reject) => {
        const callers = waiting.get(key);
        if (callers === undefined) waiting.set(key, [{ resolve, reject }]);
        else callers.push({ resolve, reject });
        queued++;
        pump();
      });
    },
    get queued() {
      return queued;
    },
    get inFlight() {
      return inFlight;
    },
  };
}
