// Answers to the commands beyond the 2016 basics, the way a camera gives them: PresetQuery and
// ConfigDownload from what the platform set before (ptz-state.ts), DeviceConfig (BasicParam applied,
// Result OK), and the GB/T 28181-2022 ones — SnapShotConfig (Result OK, then each picture POSTed to
// the UploadURL and Notify/UploadSnapShotFinished), DeviceUpgrade (Notify/DeviceUpgradeResult after
// `upgradeMs`), SDCardStatus, PTZPosition, HomePositionQuery, CruiseTrackListQuery, CruiseTrackQuery.
// In 2016 mode (`gbVersion: '2016'`) the 2022 requests get their SIP 200 and nothing else, as a
// 2016 device that does not know them does.
import {
  buildConfigDownloadResponse, buildDeviceUpgradeResult, buildManscdp, buildPresetQueryResponse, buildResultResponse,
  buildUploadSnapShotFinished, RESULT_ERROR, RESULT_OK, type ConfigDownloadQuery, type DeviceConfig, type ManscdpMessage,
  type ManscdpNode, type SnGenerator,
} from '@vms/gb28181';
import type { SipLogger } from '@vms/sip';
import type { ResolvedDeviceOptions } from './options.ts';
import type { PlatformLink } from './platform-link.ts';
import type { PtzState } from './ptz-state.ts';

export interface ExtraDeps {
  o: ResolvedDeviceOptions;
  link: PlatformLink;
  state: PtzState;
  sn: SnGenerator;
  sipPort: () => number;
  log: SipLogger;
  /** Pictures uploaded so far (tests read it). */
  onUpload: (u: { url: string; status: number; bytes: number }) => void;
}

/** How long a simulated firmware upgrade takes before its result is notified. */
export const UPGRADE_MS = 300;
/** A snapshot upload that hangs is abandoned after this. */
const UPLOAD_TIMEOUT_MS = 10_000;

/** A small but well-formed baseline JPEG: SOI, APP0 JFIF, a comment carrying `label`, EOI. */
export function syntheticJpeg(label: string): Buffer {
  const comment = Buffer.from(label, 'utf8');
  const com = Buffer.concat([Buffer.from([0xff, 0xfe, (comment.length + 2) >> 8, (comment.length + 2) & 0xff]), comment]);
  const jfif = Buffer.from([0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), jfif, com, Buffer.from([0xff, 0xd9])]);
}

const send = (deps: ExtraDeps, root: 'Response' | 'Notify', cmdType: string, sn: string | number, deviceId: string, fields: ManscdpNode): Promise<unknown> =>
  deps.link.sendManscdp(buildManscdp({ root, cmdType, sn, deviceId, fields }, { charset: deps.o.charset }));

const sleep = (deps: ExtraDeps, ms: number): Promise<void> => new Promise((resolve) => deps.o.clock.setTimeout(resolve, ms));

export function answerPresetQuery(deps: ExtraDeps, sn: string, targetId: string): Promise<unknown> {
  const presets = [...(deps.state.presets.get(targetId) ?? new Map<number, string>())].sort(([a], [b]) => a - b);
  return deps.link.sendManscdp(
    buildPresetQueryResponse({ sn, deviceId: targetId, presets: presets.map(([id, name]) => ({ presetId: String(id), presetName: name })) }, { charset: deps.o.charset }),
  );
}

export function answerConfigDownload(deps: ExtraDeps, q: ConfigDownloadQuery): Promise<unknown> {
  const { o, state } = deps;
  const known = q.configType.split('/').includes('BasicParam');
  const basicParam = {
    name: state.basic.name,
    deviceId: o.deviceId,
    sipServerId: o.server.id,
    sipServerIp: o.server.host,
    sipServerPort: String(o.server.port),
    domainName: o.server.domain,
    expiration: state.basic.expiration,
    heartBeatInterval: state.basic.heartBeatInterval,
    heartBeatCount: state.basic.heartBeatCount,
  };
  return deps.link.sendManscdp(
    buildConfigDownloadResponse({ sn: q.sn, deviceId: q.deviceId, result: known ? RESULT_OK : RESULT_ERROR, ...(known ? { basicParam } : {}) }, { charset: o.charset }),
  );
}

export async function answerDeviceConfig(deps: ExtraDeps, c: DeviceConfig): Promise<void> {
  const { o, state } = deps;
  const snapshot = c.snapShotConfig;
  const refuse = snapshot !== undefined && o.gbVersion !== '2022';
  if (c.basicParam !== undefined && !refuse) {
    const b = c.basicParam;
    state.basic = { name: b.name ?? state.basic.name, expiration: b.expiration ?? state.basic.expiration, heartBeatInterval: b.heartBeatInterval ?? state.basic.heartBeatInterval, heartBeatCount: b.heartBeatCount ?? state.basic.heartBeatCount };
  }
  await deps.link.sendManscdp(buildResultResponse('DeviceConfig', { sn: c.sn, deviceId: c.deviceId, result: refuse ? RESULT_ERROR : RESULT_OK }, { charset: o.charset }));
  if (snapshot === undefined || refuse) return;
  const count = Math.min(10, Math.max(1, Number(snapshot.snapNum) || 1));
  const intervalMs = Math.min(600, Math.max(0, Number(snapshot.interval) || 0)) * 1000;
  const fileIds: string[] = [];
  for (let i = 1; i <= count; i++) {
    if (i > 1) await sleep(deps, intervalMs);
    const fileId = `${c.deviceId}${String(i).padStart(2, '0')}`;
    const picture = syntheticJpeg(`${c.deviceId} ${snapshot.sessionId} ${i}`);
    try {
      const res = await fetch(snapshot.uploadUrl, { method: 'POST', body: picture, headers: { 'Content-Type': 'image/jpeg' }, signal: AbortSignal.timeout(UPLOAD_TIMEOUT_MS) });
      await res.arrayBuffer();
      deps.onUpload({ url: snapshot.uploadUrl, status: res.status, bytes: picture.length });
      if (res.ok) fileIds.push(fileId);
    } catch (err) {
      deps.log.debug({ err }, 'snapshot upload failed');
      deps.onUpload({ url: snapshot.uploadUrl, status: 0, bytes: picture.length });
    }
  }
  await deps.link.sendManscdp(buildUploadSnapShotFinished({ sn: String(deps.sn.next()), deviceId: c.deviceId, sessionId: snapshot.sessionId, fileIds }, { charset: o.charset }));
}

export async function finishUpgrade(deps: ExtraDeps, sessionId: string, firmware: string): Promise<void> {
  await sleep(deps, UPGRADE_MS);
  deps.state.firmware = firmware;
  await deps.link.sendManscdp(buildDeviceUpgradeResult({ sn: String(deps.sn.next()), deviceId: deps.o.deviceId, sessionId, firmware, result: RESULT_OK }, { charset: deps.o.charset }));
}

/** A 2022 query (generic body); undefined when the device does not answer it. */
export function answer2022Query(deps: ExtraDeps, q: ManscdpMessage): Promise<unknown> | undefined {
  if (deps.o.gbVersion !== '2022') return undefined;
  const { state } = deps;
  const target = q.deviceId;
  switch (q.cmdType) {
    case 'SDCardStatus': {
      // §A.2.6.16 (shapes: shared/gb28181 queries-2022.ts): FormatProgress only while formatting
      const items = state.sdCards.map((c) => ({
        ID: c.id,
        HddName: `SD${c.id}`,
        Status: c.status,
        ...(c.status === 'formatting' ? { FormatProgress: '50' } : {}),
        Capacity: '32768',
        FreeSpace: c.formatCount > 0 ? '32768' : '16384',
      }));
      return send(deps, 'Response', 'SDCardStatus', q.sn, target, { SumNum: String(items.length), SDCardStatusInfo: { '@Num': String(items.length), Item: items } });
    }
    case 'PTZPosition': {
      const p = state.positions.get(target) ?? { pan: '0', tilt: '0', zoom: '1' };
      return send(deps, 'Response', 'PTZPosition', q.sn, target, { Pan: p.pan, Tilt: p.tilt, Zoom: p.zoom, HorizontalFieldAngle: '60.0', VerticalFieldAngle: '34.0', MaxViewDistance: '150' });
    }
    case 'HomePositionQuery': {
      const h = state.home.get(target) ?? { enabled: '0', resetTime: '', presetIndex: '' };
      return send(deps, 'Response', 'HomePositionQuery', q.sn, target, { HomePosition: { Enabled: h.enabled, ResetTime: h.resetTime, PresetIndex: h.presetIndex } });
    }
    case 'CruiseTrackListQuery': {
      const tracks = [...(state.cruiseTracks.get(target) ?? new Map<number, number[]>()).keys()].sort((a, b) => a - b);
      const items = tracks.map((n) => ({ Number: String(n), Name: `巡航${n}` }));
      return send(deps, 'Response', 'CruiseTrackListQuery', q.sn, target, { SumNum: String(items.length), CruiseTrackList: { '@Num': String(items.length), CruiseTrack: items } });
    }
    case 'CruiseTrackQuery': {
      const number = Number(q.fields['Number']);
      const points = state.cruiseTracks.get(target)?.get(number);
      if (points === undefined) return send(deps, 'Response', 'CruiseTrackQuery', q.sn, target, { Result: RESULT_ERROR });
      const items = points.map((p) => ({ PresetIndex: String(p), StayTime: '5', Speed: '50' }));
      return send(deps, 'Response', 'CruiseTrackQuery', q.sn, target, { Number: String(number), Name: `巡航${number}`, SumNum: String(items.length), CruisePointList: { '@Num': String(items.length), CruisePoint: items } });
    }
    default:
      return undefined;
  }
}
