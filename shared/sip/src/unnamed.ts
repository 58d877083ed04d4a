/**
 * `fn` itself. For closures made per request: written as an argument, a closure is not in a naming
 * position (`const f = () => …`, `{ key: () => … }`), where tsx (esbuild with `keepNames`, how the
 * platform runs) wraps it in `__name(fn, "key")` — an Object.defineProperty of `name` on every closure
 * made, ~4k instructions each under callgrind, six per REGISTER (issue 11). Module-level functions are
 * named once and need none of this.
 */
export function unnamed<F extends (...args: never[]) => unknown>(fn: F): F {
  return fn;
}
