// `POST /vms/snapshot/upload/:token` (GB/T 28181-2022 §9.14): a device uploads a picture it was asked
// for by SnapShotConfig. No operator token: the device proves the request with the random token of
// the UploadURL it was given (commands/snapshot-uploads.ts); an unknown, expired or already full
// token answers 404, a body over `vms.limits.snapshot-max-bytes` 413 before it is read whole, a body
// that is not a JPEG 400. Not owner-routed: the URL names the instance that asked.
import type { FastifyInstance } from 'fastify';
import type { DeviceCommandService } from '../../commands/device-commands.port.ts';
import { SNAPSHOT_UPLOAD_PATH, UPLOAD_TOKEN_PATTERN } from '../../commands/snapshot-uploads.ts';
import { BadParameterError, UploadNotFoundError } from '../../errors/catalog.ts';
import { ok } from '../envelope.ts';
import { SNAPSHOT_UPLOAD_SCHEMA } from '../schemas/commands.ts';

export function registerSnapshotUploadRoute(app: FastifyInstance, commands: Pick<DeviceCommandService, 'receiveSnapshot'>, bodyLimit: number): void {
  app.post<{ Params: { token: string } }>(`${SNAPSHOT_UPLOAD_PATH}:token`, { bodyLimit, schema: SNAPSHOT_UPLOAD_SCHEMA }, async (request) => {
    const { token } = request.params;
    if (!UPLOAD_TOKEN_PATTERN.test(token)) throw new UploadNotFoundError();
    const body = request.rawBody;
    if (body === null || body === undefined || body.length === 0) throw new BadParameterError('body', 'must be a JPEG picture');
    const stored = await commands.receiveSnapshot(token, body);
    return ok({ name: stored.name, size: stored.size });
  });
}
