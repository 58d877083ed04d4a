import type { FastifyInstance } from 'fastify';
import { BadParameterError } from '../errors/catalog.ts';

/**
 * Bodies are read as bytes and kept on `request.rawBody` (forwarding replays them unchanged).
 * JSON is parsed when present; an empty JSON body is fine (the control API takes query parameters).
 */
export function installBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    request.rawBody = bytes;
    if (bytes.length === 0) return done(null, undefined);
    try {
      done(null, JSON.parse(bytes.toString('utf8')));
    } catch {
      done(new BadParameterError('body', 'is not valid JSON'), undefined);
    }
  });
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body, done) => {
    request.rawBody = body as Buffer;
    done(null, body);
  });
}
