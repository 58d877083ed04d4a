// Strings read from a message (header values, URI parts, Via params) are V8 slices of the message's
// text, and keys built from them are concatenations of such slices: either keeps the whole text of the
// message reachable (~0.5 KB a datagram) for as long as the small string lives. Whatever outlives the
// message (a transaction key kept for Timer J, a device id kept as long as the device is registered)
// is copied into a string of its own first (issue 11: memory per registered device).

/**
 * A copy of `s` that shares no storage with the string it was cut from. One character prepended and cut
 * off again: the concatenation is a cons string, which slicing flattens into a fresh sequential string
 * (a copy of the characters), and the slice then points into that copy, not into the message. ~1k
 * instructions against ~6k for the Buffer round trip this replaced (issue 11: one per registration for
 * the device id, one for the nonce ledger, more for transaction keys). V8 behaviour, not a language
 * guarantee: the heap-snapshot tests (register-device-id, auth-nonce-ledger-retention,
 * transaction-retention) fail if a copy keeps the message alive.
 */
export function detachString(s: string): string {
  return (' ' + s).slice(1);
}
