// Counts the statements a store sends: a view of a mysql2 pool whose `query` and `execute` calls are
// counted (every other member passes through). Tests that show statements being shared read it.
export interface CountedPool<P> {
  /** The pool to hand to the store. */
  readonly pool: P;
  /** Statements sent through it so far. */
  readonly statements: number;
}

export function countStatements<P extends object>(pool: P): CountedPool<P> {
  let statements = 0;
  const counted = new Proxy(pool, {
    get(target, prop) {
      const v: unknown = Reflect.get(target, prop, target);
      if (typeof v !== 'function') return v;
      const f = v as (...a: unknown[]) => unknown;
      if (prop === 'query' || prop === 'execute') return (...args: unknown[]) => (statements++, f.apply(target, args));
      return f.bind(target);
    },
  });
  return {
    pool: counted,
    get statements() {
      return statements;
    },
  };
}
