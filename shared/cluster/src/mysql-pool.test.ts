import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidStoreUrlError } from './errors.ts';
import { parseMysqlUrl } from './mysql-pool.ts';

describe('parseMysqlUrl (SPEC §12 MYSQL_URL)', () => {
  it('reads user, password, host, port and database', () => {
    assert.deepEqual(parseMysqlUrl('mysql://vms:p%40ss@db.local:3307/blade_iot'), {
      host: 'db.local',
      port: 3307,
      user: 'vms',
      password: 'p@ss',
      database: 'blade_iot',
    });
    assert.equal(parseMysqlUrl('mysql://u@h/db').port, 3306);
  });

  it('rejects other schemes and URLs without a database', () => {
    for (const bad of ['postgres://u@h/db', 'mysql://u@h', 'mysql://u@h/', 'not a url']) {
      assert.throws(() => parseMysqlUrl(bad), InvalidStoreUrlError, bad);
    }
  });
});
