// Token extraction (SPEC §12): `Blade-Auth: bearer <JWT>` first, then `Authorization: Bearer <JWT>`.
// The scheme is case-insensitive; a bare JWT in Blade-Auth is accepted too.

type Headers = Readonly<Record<string, string | string[] | undefined>>;

const first = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

function tokenOf(value: string | undefined, bareAllowed: boolean): string | null {
  if (value === undefined) return null;
  const text = value.trim();
  const m = /^bearer\s+(\S+)$/i.exec(text);
  if (m !== null) return m[1] ?? null;
  return bareAllowed && /^[\w-]+\.[\w-]+\.[\w-]*$/.test(text) ? text : null;
}

/** Header names are lower-case (Node's IncomingMessage). */
export function extractToken(headers: Headers): string | null {
  return tokenOf(first(headers['blade-auth']), true) ?? tokenOf(first(headers['authorization']), false);
}
