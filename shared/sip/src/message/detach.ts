// Strings read from a message (header values, URI parts, Via params) are V8 slices of the message's
// text, and keys built from them are concatenations of such slices: either keeps the whole text of the
// message reachable (~0.5 KB a datagram) for as long as the small string lives. Whatever outlives the
// message (a transaction key kept for Timer J, a device id kept as long as the device is registered)
// is copied into a string of its own first (issue 11: memory per registered device).

/** A copy of `s` that shares no storage with the string it was cut from. */
export function detachString(s: string): string {
  return Buffer.from(s, 'utf8').toString('utf8');
}
