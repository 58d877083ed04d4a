// `POST /vms/webhook/:hook` (routes/webhook.ts): documented, hardly validated. The hook receiver
// authenticates the node and parses the body itself and answers in ZLM's envelope, which a schema
// refusal (the API envelope) would not be; so only the hook name's length is checked here.
import type { JsonSchema } from './common.ts';

export const WEBHOOK_SCHEMA: Readonly<Record<string, unknown>> = {
  summary: 'ZLMediaKit hook (on_server_keepalive, on_stream_changed, on_stream_none_reader, on_rtp_server_timeout, …)',
  description:
    'Configured in each media node as its hook URL with ?secret=<the node secret>. No operator token. A hook about a stream ' +
    'another instance holds is forwarded to it. Answered in ZLM’s envelope {code: 0, msg}, not the API envelope.',
  tags: ['media hooks'],
  security: [],
  params: { type: 'object', properties: { hook: { type: 'string', maxLength: 64, description: 'ZLM hook name' } }, required: ['hook'] } satisfies JsonSchema,
  querystring: { type: 'object', properties: { secret: { type: 'string', description: 'the media node’s api.secret' } } } satisfies JsonSchema,
};
