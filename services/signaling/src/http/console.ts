// The web console (README "Web console"): a static single-page app in services/signaling/console,
// served by every instance under /console. The files are read once when the app is built and served
// from memory: only the names found then (a flat folder of .html/.js/.css), nothing else on disk is
// reachable, and the total is bounded. No token is needed to load the page; every API call it makes
// carries the operator's own token, so the console sees exactly what that token may see (SPEC SEC-2).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { RouteNotFoundError } from '../errors/catalog.ts';

export const CONSOLE_PREFIX = '/console';
/** The folder shipped in the repository and the image (Dockerfile copies services/signaling whole). */
export const CONSOLE_DIR = fileURLToPath(new URL('../../console/', import.meta.url));

const TYPES: Readonly<Record<string, string>> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};
const NAME = /^[a-z][a-z0-9-]{0,63}\.(html|js|css)$/;
/** The console is a few tens of kilobytes; anything near this bound is not the console. */
export const MAX_CONSOLE_BYTES = 2 * 1024 * 1024;

// Scripts and styles only from this origin; the API under the same origin; video from the media nodes
// (another host and port, SPEC §9 URLs); no framing (clickjacking of the PTZ pad).
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; media-src 'self' http: https: blob:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

export interface ConsoleFile {
  readonly type: string;
  readonly body: Buffer;
}

/** Reads the console's files; throws when the folder holds more than MAX_CONSOLE_BYTES or no index.html. */
export function loadConsoleFiles(dir: string = CONSOLE_DIR): ReadonlyMap<string, ConsoleFile> {
  const files = new Map<string, ConsoleFile>();
  let total = 0;
  for (const name of readdirSync(dir).sort()) {
    const ext = NAME.exec(name)?.[1];
    const path = join(dir, name);
    if (ext === undefined || !statSync(path).isFile()) continue;
    const body = readFileSync(path);
    total += body.length;
    if (total > MAX_CONSOLE_BYTES) throw new Error(`console files in ${dir} exceed ${MAX_CONSOLE_BYTES} bytes`);
    files.set(name, { type: TYPES[ext] ?? 'application/octet-stream', body });
  }
  if (!files.has('index.html')) throw new Error(`no index.html in the console folder ${dir}`);
  return files;
}

/** GET /console (→ /console/), /console/ (index.html), /console/:file. Hidden from the OpenAPI document: not API. */
export function registerConsoleRoutes(app: FastifyInstance, files: ReadonlyMap<string, ConsoleFile>): void {
  const schema = { hide: true };
  // relative, so that /blade-iot/console lands on /blade-iot/console/ (SPEC ROUTE-7 prefix kept)
  app.get(CONSOLE_PREFIX, { schema }, async (_request, reply) => reply.redirect('console/', 302));
  const send = (name: string, method: string, url: string) => {
    const f = files.get(name);
    if (f === undefined) throw new RouteNotFoundError(method, url.split('?')[0] ?? url);
    return f;
  };
  app.get(`${CONSOLE_PREFIX}/`, { schema }, async (request, reply) => {
    const f = send('index.html', request.method, request.url);
    return reply.headers(SECURITY_HEADERS).type(f.type).send(f.body);
  });
  app.get<{ Params: { file: string } }>(`${CONSOLE_PREFIX}/:file`, { schema }, async (request, reply) => {
    const f = send(request.params.file, request.method, request.url);
    return reply.headers(SECURITY_HEADERS).type(f.type).send(f.body);
  });
}
