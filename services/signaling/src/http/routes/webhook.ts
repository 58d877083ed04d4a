// `POST /vms/webhook/:hook` (SPEC §12, ROUTE-7): ZLMediaKit hooks. No operator token and no owner
// routing of the control API; the sender is verified by its node secret (`?secret=`, createHookHandler).
// A hook about a stream another instance holds is forwarded to that instance (media/media-hooks.ts).
// Answered in ZLM's own envelope (`{code: 0, ...}`, `close` for on_stream_none_reader), not the API envelope.
import type { FastifyInstance } from 'fastify';
import type { MediaWiring } from '../../media/media-wiring.ts';
import { WEBHOOK_PREFIX } from '../paths.ts';
import { WEBHOOK_SCHEMA } from '../schemas/webhook.ts';

/** `bodyLimit`: hook bodies are small JSON; no token is needed to send one, so the cap is tight (SEC-3). */
export function registerWebhookRoute(app: FastifyInstance, media: Pick<MediaWiring, 'receiveHook'>, bodyLimit: number): void {
  app.post<{ Params: { hook: string } }>(`${WEBHOOK_PREFIX}:hook`, { bodyLimit, schema: WEBHOOK_SCHEMA }, async (request, reply) => {
    const answer = await media.receiveHook({
      name: request.params.hook,
      body: request.body,
      rawBody: request.rawBody,
      query: request.query as Record<string, unknown>,
      headers: request.headers,
      path: request.originalUrl,
      log: request.log,
    });
    return reply.status(answer.status).type(answer.contentType).send(answer.body);
  });
}
