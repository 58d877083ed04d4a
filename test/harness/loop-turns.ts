// Turns of the event loop, for tests of work that must not hold the loop (SPEC SEC-3): a setImmediate
// chain counts one per turn, so 0 turns while some work ran means it held the loop until it ended.

export interface LoopTurns {
  /** Turns counted so far. */
  readonly turns: number;
  /** Stops counting; returns the count. */
  stop(): number;
}

/** Counts turns of the event loop from now until stop(). */
export function countLoopTurns(): LoopTurns {
  let turns = 0;
  let running = true;
  const spin = (): void => {
    if (!running) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  return {
    get turns() {
      return turns;
    },
    stop() {
      running = false;
      return turns;
    },
  };
}

/** Turns of the event loop taken while `work` runs (0: it held the loop until it resolved). */
export async function turnsDuring(work: () => Promise<unknown>): Promise<number> {
  const counter = countLoopTurns();
  try {
    await work();
  } finally {
    counter.stop();
  }
  return counter.turns;
}
