// Mutation fuzzing of every parser of the package (STYLE §10), seeded from the captures plus a few
// built bodies, with a deterministic PRNG so a failure reproduces (mutations from @vms/harness/fuzz,
// shared with test/bench/fuzz.ts). Contract: whatever the input, the
// only exceptions that escape are the package's typed errors, and no input takes long.
import assert from 'node:assert/strict';
import {
  buildCatalogResponse,
  buildMansrtspSpeed,
  buildPlaybackOffer,
  decodeManscdpCommand,
  decodePtzCmd,
  describeSdp,
  GB_ERROR_CODES,
  isGbError,
  parseGbId,
  parseGbTime,
  parseManscdp,
  parseMansrtsp,
  parseMediaFormat,
  parseSdp,
  parseSsrc,
} from '../src/index.ts';
import { mutateMarkup as mutate, prng } from '@vms/harness/fuzz';
import { fillTemplate } from './samples.ts';
import { allSamples, test } from './support.ts';

const SEED = Number(process.env['GB28181_FUZZ_SEED'] ?? 0x5eed2816);
const MANSCDP_CASES = 100_000;
const SDP_CASES = 20_000;
const RTSP_CASES = 10_000;
const MISC_CASES = 10_000;
/**
 * "No hang": typical inputs take well under 1 ms; the bound is loose because the suite may share the
 * CPU with other jobs (a GC pause or a descheduled process shows up as a few hundred ms).
 */
const MAX_MS_PER_INPUT = 1000;
/**
 * Parse limit used while fuzzing: above the largest capture (7.4 KB) so every seed parses, low enough
 * that grown inputs hit GB_ERR_TOO_LARGE instead of spending the time budget in the XML parser.
 */
const FUZZ_MAX_BYTES = 8 * 1024;

interface Stats {
  ok: number;
  errors: Map<string, number>;
  maxMs: number;
}

/** Feeds `cases` mutations of the seeds to `run`; fails on any non-GbError exception or a slow input. */
function fuzz(name: string, seeds: readonly Buffer[], cases: number, seed: number, run: (input: Buffer) => void, expectMix = true): Stats {
  const rnd = prng(seed);
  const stats: Stats = { ok: 0, errors: new Map(), maxMs: 0 };
  for (let i = 0; i < cases; i++) {
    const input = mutate(seeds[i % seeds.length] as Buffer, rnd, seeds);
    const started = performance.now();
    try {
      run(input);
      stats.ok++;
    } catch (err) {
      if (!isGbError(err)) {
        assert.fail(`${name} case ${i} (seed ${seed}) threw ${String(err)}\ninput (base64): ${input.toString('base64')}`);
      }
      stats.errors.set(err.code, (stats.errors.get(err.code) ?? 0) + 1);
    }
    const ms = performance.now() - started;
    if (ms > stats.maxMs) stats.maxMs = ms;
  }
  assert.ok(stats.maxMs < MAX_MS_PER_INPUT, `${name}: slowest input took ${stats.maxMs.toFixed(1)} ms`);
  if (expectMix) {
    // a useful fuzz run exercises both outcomes
    assert.ok(stats.ok > cases / 50, `${name}: too few inputs parsed (${stats.ok})`);
    assert.ok(stats.errors.size >= 2, `${name}: too few error kinds`);
  }
  for (const code of stats.errors.keys()) assert.ok((Object.values(GB_ERROR_CODES) as string[]).includes(code));
  return stats;
}

const samples = allSamples();
const manscdpSeeds = [
  ...samples.filter((s) => s.kind === 'manscdp').map((s) => s.bytes),
  buildCatalogResponse(
    { sn: '9', deviceId: '34020000001320000001', sumNum: 2, items: [{ deviceId: '34020000001310000001', name: '中国大门', ptzType: '1' }, { deviceId: '34020000001310000002', event: 'ON' }] },
    { charset: 'GB2312' },
  ),
];
const sdpSeeds = [
  ...samples.filter((s) => s.kind === 'sdp').map((s) => Buffer.from(fillTemplate(s.body))),
  Buffer.from(
    buildPlaybackOffer({
      ownerId: '34020000002000000001', address: '10.0.0.1', port: 30000, ssrc: '1200000001', transport: 'tcp-passive',
      channelId: '34020000001310000001', start: new Date(1704038400000), end: new Date(1704042000000), format: 'v/2/6///a///',
    }),
  ),
];
const rtspSeeds = [
  ...samples.filter((s) => s.kind === 'mansrtsp').map((s) => Buffer.from(s.body)),
  Buffer.from(buildMansrtspSpeed(3, 0.5)),
  Buffer.from('PAUSE RTSP/1.0\r\nCSeq: 4\r\nPauseTime: now\r\n'),
  Buffer.from('PLAY RTSP/1.0\r\nCSeq: 5\r\nRange: npt=100-200\r\n'),
];

test(`fuzz: ${MANSCDP_CASES} mutated MANSCDP bodies -> parseManscdp + typed decoders`, { timeout: 120_000 }, () => {
  const stats = fuzz('manscdp', manscdpSeeds, MANSCDP_CASES, SEED, (input) => {
    const cmd = decodeManscdpCommand(parseManscdp(input, { maxBytes: FUZZ_MAX_BYTES }));
    if (cmd.kind === 'Control/DeviceControl' && cmd.body.command.type === 'PTZCmd') decodePtzCmd(cmd.body.command.ptzCmd);
  });
  for (const code of ['GB_ERR_XML', 'GB_ERR_CHARSET', 'GB_ERR_TOO_LARGE', 'GB_ERR_DOCTYPE']) {
    assert.ok((stats.errors.get(code) ?? 0) > 0, `no ${code} seen`);
  }
});

test(`fuzz: ${SDP_CASES} mutated SDP texts -> parseSdp + describeSdp`, { timeout: 60_000 }, () => {
  fuzz('sdp', sdpSeeds, SDP_CASES, SEED + 1, (input) => {
    const sdp = parseSdp(input, { maxBytes: FUZZ_MAX_BYTES });
    const summary = describeSdp(sdp);
    if (summary.format !== undefined) parseMediaFormat(summary.format);
    if (summary.ssrcValid && summary.ssrc !== undefined) parseSsrc(summary.ssrc);
  });
});

test(`fuzz: ${RTSP_CASES} mutated MANSRTSP bodies`, { timeout: 60_000 }, () => {
  fuzz('mansrtsp', rtspSeeds, RTSP_CASES, SEED + 2, (input) => {
    parseMansrtsp(input);
  });
});

test(`fuzz: ${MISC_CASES} mutated ids, PTZ commands and times`, { timeout: 60_000 }, () => {
  const seeds = ['34020000001320000001', '130909113319427420', 'A50F010180000036', 'A50F01021F0000D6', '2024-01-01T00:00:00', '2024-01-01 08:00:00+08:00'].map((s) => Buffer.from(s));
  const stats = fuzz(
    'misc',
    seeds,
    MISC_CASES,
    SEED + 3,
    (input) => {
      const text = input.toString('latin1');
      for (const run of [() => parseGbId(text), () => decodePtzCmd(text), () => parseGbTime(text, 480)]) {
        try {
          run();
        } catch (err) {
          if (!isGbError(err)) throw err; // reported with the input by fuzz()
        }
      }
    },
    false,
  );
  assert.equal(stats.ok, MISC_CASES);
});
