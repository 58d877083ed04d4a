// Pins the simulator's error catalog: code → SIP status (STYLE 2). Changing a row is an API change.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { DeviceSimConfigError, DeviceSimError, DSIM_ERROR_SIP_STATUS, RegisterRejectedError } from '../src/index.ts';

it('maps every code to its SIP status', () => {
  assert.deepEqual({ ...DSIM_ERROR_SIP_STATUS }, {
    DSIM_ERR_CONFIG: 500,
    DSIM_ERR_CLOSED: 503,
    DSIM_ERR_REGISTER_REJECTED: 500,
    DSIM_ERR_UNKNOWN_TARGET: 404,
    DSIM_ERR_BAD_OFFER: 488,
    DSIM_ERR_BAD_BODY: 400,
    DSIM_ERR_BAD_EVENT: 489,
    DSIM_ERR_MEDIA: 500,
  });
  const config = new DeviceSimConfigError(['a: bad', 'b: worse']);
  assert.ok(config instanceof DeviceSimError);
  assert.deepEqual([config.code, config.sipStatus, config.issues], ['DSIM_ERR_CONFIG', 500, ['a: bad', 'b: worse']]);
  const rejected = new RegisterRejectedError(403);
  assert.deepEqual([rejected.name, rejected.code, rejected.status], ['RegisterRejectedError', 'DSIM_ERR_REGISTER_REJECTED', 403]);
});
