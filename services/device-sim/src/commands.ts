// MANSCDP requests from the platform (GB/T 28181-2016 §9.3-§9.7, Annex A): the MESSAGE is answered
// 200 at once, then the answer goes out as MESSAGEs of its own — Catalog and RecordInfo split over
// several, each repeating SN and SumNum. DeviceControl commands are recorded for tests to inspect.
import {
  buildCatalogResponsePages, buildDeviceInfoResponse, buildDeviceStatusResponse, buildRecordInfoResponse, buildResultResponse,
  decodePtzCmd, formatGbTime, isGbError, parseGbTime, parseManscdpCommand, RESULT_OK,
  type CatalogQuery, type DecodedPtzCmd, type DeviceControl, type DeviceControlCommand, type ManscdpCommand, type ManscdpHeader,
  type RecordInfoQuery,
} from '@vms/gb28181';
import { SipStatus, type Flow, type ServerContext, type SipLogger, type SipRequest } from '@vms/sip';
import { catalogItems, pages, syntheticRecords, type SimChannel } from './channels.ts';
import type { ResolvedDeviceOptions } from './options.ts';
import type { PlatformLink } from './platform-link.ts';
import { answer2022Query, answerConfigDownload, answerDeviceConfig, answerPresetQuery, finishUpgrade, type ExtraDeps } from './commands-extra.ts';
import type { PtzState } from './ptz-state.ts';
import type { BroadcastNotify } from '@vms/gb28181';

export interface ReceivedCommand {
  /** `<root>/<CmdType>` of a modelled command, or `generic`. */
  kind: ManscdpCommand['kind'];
  root: string;
  cmdType: string;
  sn: string;
  /** The DeviceID the command addressed: the device or one of its channels. */
  targetId: string;
  command: ManscdpCommand;
  flow: Flow;
}

export interface RecordedControl {
  sn: string;
  targetId: string;
  command: DeviceControlCommand;
  /** PTZCmd decoded (Annex A.3), when the command is a PTZCmd with valid check bytes. */
  ptz?: DecodedPtzCmd;
  /** GB error code when the PTZCmd was malformed. */
  ptzError?: string;
}

export interface CommandDeps extends ExtraDeps {
  /** Notify/Broadcast: answer and INVITE the source for audio (broadcast.ts). */
  onBroadcast: (n: BroadcastNotify) => Promise<unknown>;
  o: ResolvedDeviceOptions;
  state: PtzState;
  link: PlatformLink;
  channels: readonly SimChannel[];
  sipPort: () => number;
  log: SipLogger;
  onCommand: (c: ReceivedCommand) => void;
  onControl: (c: RecordedControl) => void;
  /** Background work (answers being sent), awaited or abandoned on close. */
  track: (work: Promise<unknown>) => void;
  /** The 200 to an accepted MESSAGE (device.ts: with or without the To-tag quirk). */
  replyOk: (ctx: ServerContext) => void;
}

/**
 * Controls the device acknowledges with Response/DeviceControl. GB/T 28181-2022 §9.3.2.1: PTZ,
 * TeleBoot, I-frame, drag zoom, PTZPreciseCtrl, FormatSDCard and TargetTrack get no Response.
 */
const ACKNOWLEDGED_CONTROLS = new Set<DeviceControlCommand['type']>(['RecordCmd', 'GuardCmd', 'AlarmCmd', 'HomePosition', 'Other', 'DeviceUpgrade']);
/** Controls only GB/T 28181-2022 defines: a 2016 device ignores them (SIP 200, nothing else). */
const CONTROLS_2022 = new Set<DeviceControlCommand['type']>(['PTZPreciseCtrl', 'TargetTrack', 'DeviceUpgrade', 'FormatSDCard']);

export function handleManscdpMessage(deps: CommandDeps, req: SipRequest, ctx: ServerContext): void {
  let command: ManscdpCommand;
  try {
    command = parseManscdpCommand(req.body);
  } catch (err) {
    if (!isGbError(err)) throw err;
    deps.log.debug({ err }, 'device got an unparsable MANSCDP body');
    ctx.reply(SipStatus.BadRequest);
    return;
  }
  const [root, cmdType] = command.kind === 'generic' ? [command.body.root, command.body.cmdType] : (command.kind.split('/') as [string, string]);
  const targetId = command.kind === 'Notify/Broadcast' ? command.body.targetId : command.body.deviceId;
  const isRequest = root === 'Query' || root === 'Control';
  if (isRequest && !isOurId(deps, targetId)) {
    ctx.reply(SipStatus.NotFound);
    return;
  }
  deps.replyOk(ctx);
  deps.onCommand({ kind: command.kind, root, cmdType, sn: command.body.sn, targetId, command, flow: ctx.flow });
  const answer = answerFor(deps, command);
  if (answer !== undefined) deps.track(answer.catch((err: unknown) => deps.log.debug({ err, cmdType }, 'device answer not delivered')));
}

function isOurId(deps: CommandDeps, id: string): boolean {
  return id === deps.o.deviceId || deps.channels.some((c) => c.id === id);
}

function answerFor(deps: CommandDeps, command: ManscdpCommand): Promise<unknown> | undefined {
  switch (command.kind) {
    case 'Query/Catalog':
      return answerCatalog(deps, command.body);
    case 'Query/DeviceInfo':
      return sendAll(deps, [deviceInfo(deps, command.body)]);
    case 'Query/DeviceStatus':
      return sendAll(deps, [deviceStatus(deps, command.body)]);
    case 'Query/RecordInfo':
      return answerRecordInfo(deps, command.body);
    case 'Control/DeviceControl':
      return control(deps, command.body);
    case 'Notify/Broadcast':
      return deps.onBroadcast(command.body);
    case 'Query/PresetQuery':
      return answerPresetQuery(deps, command.body.sn, command.body.deviceId);
    case 'Query/ConfigDownload':
      return answerConfigDownload(deps, command.body);
    case 'Control/DeviceConfig':
      return answerDeviceConfig(deps, command.body);
    case 'generic':
      return command.body.root === 'Query' ? answer2022Query(deps, command.body) : undefined;
    default:
      return undefined;
  }
}

/** One MESSAGE after the other, in order: platforms assemble pages by SN but some expect them sorted. */
async function sendAll(deps: CommandDeps, bodies: readonly Buffer[]): Promise<void> {
  for (const body of bodies) await deps.link.sendManscdp(body);
}

function answerCatalog(deps: CommandDeps, q: CatalogQuery): Promise<void> {
  const { o } = deps;
  const items = catalogItems(o, deps.channels, { sipPort: deps.sipPort() });
  const bodies = buildCatalogResponsePages({ sn: q.sn, deviceId: o.deviceId }, items, { pageSize: o.catalogPageSize, charset: o.charset });
  return sendAll(deps, bodies);
}

function deviceInfo(deps: CommandDeps, q: ManscdpHeader): Buffer {
  const { o } = deps;
  return buildDeviceInfoResponse(
    {
      sn: q.sn,
      deviceId: q.deviceId,
      deviceName: deps.state.basic.name,
      result: RESULT_OK,
      manufacturer: o.manufacturer,
      model: o.model,
      firmware: deps.state.firmware,
      channel: String(deps.channels.length),
    },
    { charset: o.charset },
  );
}

function deviceStatus(deps: CommandDeps, q: ManscdpHeader): Buffer {
  const { o } = deps;
  return buildDeviceStatusResponse(
    {
      sn: q.sn,
      deviceId: q.deviceId,
      result: RESULT_OK,
      online: 'ONLINE',
      status: 'OK',
      encode: 'ON',
      record: 'OFF',
      deviceTime: formatGbTime(new Date(o.clock.now()), o.utcOffsetMinutes),
      alarms: [],
    },
    { charset: o.charset },
  );
}

function answerRecordInfo(deps: CommandDeps, q: RecordInfoQuery): Promise<void> {
  const { o } = deps;
  const channel = deps.channels.find((c) => c.id === q.deviceId) ?? deps.channels[0];
  let items: ReturnType<typeof syntheticRecords> = [];
  if (channel !== undefined) {
    try {
      const start = parseGbTime(q.startTime, o.utcOffsetMinutes);
      const end = parseGbTime(q.endTime, o.utcOffsetMinutes);
      items = syntheticRecords(o, { channel, start, end, type: q.type });
    } catch (err) {
      if (!isGbError(err)) throw err;
      deps.log.debug({ err }, 'device got a RecordInfo query with bad times'); // answered with no records
    }
  }
  const bodies = pages(items, o.recordPageSize).map((page) =>
    buildRecordInfoResponse({ sn: q.sn, deviceId: q.deviceId, name: channel?.name ?? o.name, sumNum: items.length, items: page }, { charset: o.charset }),
  );
  return sendAll(deps, bodies);
}

function control(deps: CommandDeps, c: DeviceControl): Promise<unknown> | undefined {
  const recorded: RecordedControl = { sn: c.sn, targetId: c.deviceId, command: c.command };
  if (c.command.type === 'PTZCmd') {
    try {
      recorded.ptz = decodePtzCmd(c.command.ptzCmd);
    } catch (err) {
      if (!isGbError(err)) throw err;
      recorded.ptzError = err.code;
    }
  }
  deps.onControl(recorded);
  if (CONTROLS_2022.has(c.command.type) && deps.o.gbVersion !== '2022') return undefined;
  deps.state.apply(c.deviceId, c.command, recorded.ptz);
  if (!ACKNOWLEDGED_CONTROLS.has(c.command.type)) return undefined;
  const ack = sendAll(deps, [buildResultResponse('DeviceControl', { sn: c.sn, deviceId: c.deviceId, result: RESULT_OK }, { charset: deps.o.charset })]);
  const upgrade = c.command.type === 'DeviceUpgrade' ? c.command : undefined;
  return upgrade === undefined ? ack : ack.then(() => finishUpgrade(deps, upgrade.sessionId, upgrade.firmware));
}
