import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ReplyError } from 'ioredis';
import {
  ClusterErrorCodes,
  ForwardConnectError,
  ForwardResponseError,
  ForwardTimeoutError,
  InvalidStoreUrlError,
  MigrationError,
  NodeRegistryQueryError,
  NodeRegistryUnavailableError,
  OwnershipCommandError,
  OwnershipUnavailableError,
  StoreClosedError,
  isTransientClusterError,
} from './errors.ts';
import { toNodeRegistryError } from './mysql-errors.ts';
import { toOwnershipError } from './redis-errors.ts';

describe('error catalog', () => {
  it('pins every class to its stable code and transience', () => {
    const table = [
      [new OwnershipUnavailableError('x'), 'CLUSTER_ERR_REDIS_UNAVAILABLE', true],
      [new OwnershipCommandError('x'), 'CLUSTER_ERR_REDIS_COMMAND', false],
      [new NodeRegistryUnavailableError('x'), 'CLUSTER_ERR_MYSQL_UNAVAILABLE', true],
      [new NodeRegistryQueryError('x'), 'CLUSTER_ERR_MYSQL_QUERY', false],
      [new MigrationError('x'), 'CLUSTER_ERR_MIGRATION', false],
      [new InvalidStoreUrlError('x'), 'CLUSTER_ERR_BAD_URL', false],
      [new StoreClosedError('x'), 'CLUSTER_ERR_CLOSED', false],
      [new ForwardConnectError('node-b', 'refused'), 'CLUSTER_ERR_FORWARD_CONNECT', true],
      [new ForwardTimeoutError('node-b', 'headers', 100), 'CLUSTER_ERR_FORWARD_TIMEOUT', true],
      [new ForwardResponseError('node-b'), 'CLUSTER_ERR_FORWARD_RESPONSE', true],
    ] as const;
    for (const [err, code, transient] of table) {
      assert.equal(err.code, code);
      assert.equal(isTransientClusterError(err), transient, code);
      assert.ok(err instanceof Error);
      assert.equal(err.name, err.constructor.name);
    }
    assert.equal(table.length, Object.keys(ClusterErrorCodes).length, 'every code has a class');
  });
});

const ReplyErrorCtor = ReplyError as new (message: string) => Error;

describe('Redis error mapping', () => {
  it('connection-level failures are unavailable', () => {
    const e = toOwnershipError(new Error("Stream isn't writeable and enableOfflineQueue options is false"), 'claim');
    assert.ok(e instanceof OwnershipUnavailableError);
    assert.ok(e.cause instanceof Error);
  });

  it('server replies are command errors unless the Redis code says "try later"', () => {
    assert.ok(toOwnershipError(new ReplyErrorCtor('WRONGTYPE Operation against a key'), 'get') instanceof OwnershipCommandError);
    for (const code of ['CLUSTERDOWN', 'LOADING', 'MASTERDOWN', 'TRYAGAIN', 'MOVED']) {
      assert.ok(toOwnershipError(new ReplyErrorCtor(`${code} something`), 'get') instanceof OwnershipUnavailableError, code);
    }
  });

  it('passes our own errors through', () => {
    const closed = new StoreClosedError('closed');
    assert.equal(toOwnershipError(closed, 'claim'), closed);
  });
});

describe('MySQL error mapping', () => {
  const driverError = (code: string, fatal = false) => Object.assign(new Error(code), { code, fatal });

  it('connection loss, refusal, deadlocks are transient', () => {
    for (const code of ['ECONNREFUSED', 'PROTOCOL_CONNECTION_LOST', 'ER_LOCK_DEADLOCK', 'ER_CON_COUNT_ERROR', 'ETIMEDOUT']) {
      assert.ok(toNodeRegistryError(driverError(code), 'q') instanceof NodeRegistryUnavailableError, code);
    }
    assert.ok(toNodeRegistryError(driverError('SOMETHING_NEW', true), 'q') instanceof NodeRegistryUnavailableError);
  });

  it('schema and permission errors are not', () => {
    for (const code of ['ER_NO_SUCH_TABLE', 'ER_ACCESS_DENIED_ERROR', 'ER_PARSE_ERROR']) {
      const e = toNodeRegistryError(driverError(code), 'q');
      assert.ok(e instanceof NodeRegistryQueryError, code);
      assert.match(e.message, new RegExp(code));
    }
    assert.ok(toNodeRegistryError('weird', 'q') instanceof NodeRegistryQueryError);
  });
});
