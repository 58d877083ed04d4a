// The control API as the console uses it: the operator's bearer token from sessionStorage (gone when
// the tab closes), the SPEC §12 envelope unwrapped. The console has no privileges of its own: every
// call carries the operator's token and the API decides what it may see (a tenant token sees only its
// tenant's devices, SPEC SEC-2).

const KEY = 'vms.console.token';

export class ApiError extends Error {
  constructor(code, msg, httpStatus) {
    super(`${msg} (code ${code})`);
    this.code = code;
    this.httpStatus = httpStatus;
  }
}

export const token = {
  get: () => sessionStorage.getItem(KEY),
  set: (t) => sessionStorage.setItem(KEY, t),
  clear: () => sessionStorage.removeItem(KEY),
};

/** The token's claims, for display only (the API verifies the signature; this does not). */
export function claimsOf(t) {
  try {
    const part = t.split('.')[1] ?? '';
    const json = atob(part.replace(/-/g, '+').replace(/_/g, '/'));
    const c = JSON.parse(json);
    return { userId: String(c.user_id ?? ''), tenantId: String(c.tenant_id ?? ''), role: c.role === 'operator' ? 'operator' : 'tenant', exp: Number(c.exp ?? 0) };
  } catch {
    return null;
  }
}

/** Calls the API under the console's origin (every instance serves both). Throws ApiError on failure. */
export async function api(method, path, body) {
  const t = token.get();
  const headers = { accept: 'application/json' };
  if (t) headers['blade-auth'] = `bearer ${t}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  let env;
  try {
    env = await res.json();
  } catch {
    throw new ApiError(res.status, `HTTP ${res.status}`, res.status);
  }
  if (res.status === 401) window.dispatchEvent(new CustomEvent('vms:unauthorized'));
  if (!env || env.success !== true) throw new ApiError(env?.code ?? res.status, env?.msg ?? `HTTP ${res.status}`, res.status);
  return env.data;
}

export const q = (params) => {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') s.set(k, String(v));
  return s.toString();
};
