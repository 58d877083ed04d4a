// `POST /vms/webhook/:hook` (SPEC §12, ROUTE-7): ZLMediaKit hooks. No operator token and no owner
// routing; the sender is verified by its node secret (`?secret=`, createHookHandler). Answered in ZLM's
// own envelope (`{code: 0, ...}`, `close: true` for on_stream_none_reader), not the API envelope.
import type { FastifyInstance } from 'fastify';
import type { MediaWiring } from '../../media/media-wiring.ts';
import { WEBHOOK_PREFIX } from '../paths.ts';

export function registerWebhookRoute(app: FastifyInstance, media: Pick<MediaWiring, 'hooks' | 'sessions'>): void {
  app.post<{ Params: { hook: string } }>(`${WEBHOOK_PREFIX}:hook`, async (request, reply) => {
    const result = media.hooks(request.params.hook, request.body, request.query as Record<string, unknown>);
    if (result.ok) {
      request.log.debug({ hook: request.params.hook }, 'media hook');
      media.sessions.onHook(result.event);
    } else {
      request.log.info({ hook: request.params.hook, code: result.error.code }, 'media hook refused');
    }
    return reply.status(result.httpStatus).type('application/json; charset=utf-8').send(result.reply);
  });
}
