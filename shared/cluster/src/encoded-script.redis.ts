/**
 * A Lua script call over many device keys, written as one RESP string built straight from the device
 * ids, for a single Redis server (issue 11 target 4b: the keepalive path's ownership renewals). ioredis
 * would, per call, copy the arguments through auto-pipelining (a Pipeline object per event-loop turn),
 * `flat()` and type-check them, and per key build the key string, measure it and concatenate five
 * pieces; here each key costs one template string and the call one `join`, and the command goes to the
 * connection directly (no pipeline). The reply, the command timeout, the offline rejection and the
 * diagnostics wrapper are ioredis's as for any command (`sendCommand`).
 *
 * EVALSHA only: a server without the script (first use, or restarted empty) answers NOSCRIPT, and the
 * call loads the script (SCRIPT LOAD) and is sent once more.
 */
import { createHash } from 'node:crypto';
import { Command, type Redis } from 'ioredis';

/** A command whose bytes are given: ioredis writes them as they are and reads the reply as usual. */
class EncodedCommand extends Command {
  readonly #payload: string;
  constructor(payload: string) {
    // strings in the reply, as ioredis's own command methods ask (its parser returns buffers otherwise)
    super('evalsha', [], { replyEncoding: 'utf8' });
    this.#payload = payload;
  }
  override toWritable(): string {
    return this.#payload;
  }
}

/** One RESP bulk string. */
const bulk = (s: string): string => `$${Buffer.byteLength(s)}\r\n${s}\r\n`;

/**
 * `EVALSHA sha numkeys <prefix>{id}… argv…` as RESP (exported for its test, which holds it equal to
 * ioredis's own encoding). The keys are `prefix{id}`, the ownership key layout (ownership.redis.ts).
 */
export function encodeKeyedEvalsha(sha: string, keyPrefix: string, ids: readonly string[], argv: readonly string[]): string {
  const parts: string[] = new Array<string>(ids.length + 1);
  parts[0] = `*${3 + ids.length + argv.length}\r\n$7\r\nevalsha\r\n${bulk(sha)}${bulk(String(ids.length))}`;
  // the key's bytes: the prefix's, the two braces, the id's (device ids are ASCII digits: length is bytes)
  const fixed = Buffer.byteLength(keyPrefix) + 2;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i] as string;
    parts[i + 1] = `$${fixed + Buffer.byteLength(id)}\r\n${keyPrefix}{${id}}\r\n`;
  }
  for (const a of argv) parts.push(bulk(a));
  return parts.join('');
}

export interface EncodedScript {
  /** Runs the script over the keys of `ids` with `argv`; resolves with its reply. */
  call(ids: readonly string[], argv: readonly string[]): Promise<unknown>;
}

export function encodedScript(client: Redis, lua: string, keyPrefix: string): EncodedScript {
  const sha = createHash('sha1').update(lua).digest('hex');
  const send = (payload: string): Promise<unknown> => client.sendCommand(new EncodedCommand(payload)) as Promise<unknown>;
  return {
    async call(ids, argv) {
      const payload = encodeKeyedEvalsha(sha, keyPrefix, ids, argv);
      try {
        return await send(payload);
      } catch (err) {
        if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
        await client.script('LOAD', lua);
        return send(payload);
      }
    },
  };
}
