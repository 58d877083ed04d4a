// Grammar-based input generation for the fuzz bench: well-formed-looking SIP messages, MANSCDP documents,
// SDP offers (with GB28181's y= and f= lines), MANSRTSP requests and JSON bodies, built from the shapes the
// standards and the captures use, with values drawn from boundary cases. Mutation (@vms/harness/fuzz)
// starts from real captures; the grammar reaches combinations no capture has (every CmdType, both
// charsets, compact headers, odd numbers) so both halves of each parser are exercised.
import { encodeText } from '@vms/gb28181';

type Rnd = () => number;
const int = (rnd: Rnd, n: number): number => Math.floor(rnd() * n);
const pick = <T>(rnd: Rnd, xs: readonly T[]): T => xs[int(rnd, xs.length)] as T;
const maybe = (rnd: Rnd, p: number, s: () => string): string => (rnd() < p ? s() : '');

const GB_IDS = ['34020000001320000001', '34020000002000000001', '3402000000131000000100', '3402000000', '00000000000000000000', '9999999999999999999x', ''];
const NUMBERS = ['0', '1', '65535', '4294967296', '-1', '99999999999999999999999', '1e3', '0x10', ' 7 ', ''];
const TEXT = ['摄像头', '通道1', 'Camera 1', '&amp;', '<![CDATA[x]]>', 'a'.repeat(300), '', ' ', '\t', '中国大门'];

const gbId = (rnd: Rnd): string => (rnd() < 0.7 ? `3402000000${pick(rnd, ['131', '132', '200', '118', '216'])}${String(int(rnd, 1e7)).padStart(7, '0')}` : pick(rnd, GB_IDS));
const num = (rnd: Rnd): string => (rnd() < 0.7 ? String(int(rnd, 1000)) : pick(rnd, NUMBERS));

// ---- SIP (RFC 3261 §25 shapes, GB/T 28181 headers) ----

const METHODS = ['REGISTER', 'MESSAGE', 'INVITE', 'ACK', 'BYE', 'CANCEL', 'SUBSCRIBE', 'NOTIFY', 'INFO', 'OPTIONS', 'PRACK', 'UPDATE', 'FOO'];
const HOSTS = ['127.0.0.1', '192.168.1.64', '[::1]', '[2001:db8::1]', 'example.com', '3402000000', 'a-b.c', ''];

function sipUri(rnd: Rnd): string {
  const user = rnd() < 0.8 ? `${gbId(rnd)}@` : '';
  const port = maybe(rnd, 0.5, () => `:${num(rnd)}`);
  const params = maybe(rnd, 0.3, () => pick(rnd, [';transport=tcp', ';lr', ';ob', ';user=phone', ';x=%41']));
  return `${pick(rnd, ['sip', 'sip', 'sips', 'tel'])}:${user}${pick(rnd, HOSTS)}${port}${params}`;
}

function nameAddr(rnd: Rnd): string {
  const display = maybe(rnd, 0.3, () => `${pick(rnd, ['"Cam"', '"a\\"b"', 'Cam', '""'])} `);
  return rnd() < 0.85 ? `${display}<${sipUri(rnd)}>` : sipUri(rnd);
}

function via(rnd: Rnd): string {
  const hop = (): string =>
    `SIP/2.0/${pick(rnd, ['UDP', 'TCP', 'TLS', 'udp', 'SCTP'])} ${pick(rnd, HOSTS)}${maybe(rnd, 0.7, () => `:${num(rnd)}`)}` +
    `${maybe(rnd, 0.5, () => ';rport')}${maybe(rnd, 0.9, () => `;branch=z9hG4bK${int(rnd, 1e9)}`)}${maybe(rnd, 0.2, () => `;received=${pick(rnd, HOSTS)}`)}`;
  return Array.from({ length: 1 + int(rnd, 3) }, hop).join(pick(rnd, [',', ', ', ' ,\r\n ']));
}

/** A SIP request or response with plausible headers and a body whose Content-Length is usually right. */
export function sipMessage(rnd: Rnd): Buffer {
  const method = pick(rnd, METHODS);
  const start = rnd() < 0.75 ? `${method} ${sipUri(rnd)} SIP/2.0` : `SIP/2.0 ${pick(rnd, ['100', '200', '401', '403', '404', '486', '500', '699', '099', '2000'])} ${pick(rnd, ['OK', 'Unauthorized', '', 'x y z'])}`;
  const body = rnd() < 0.5 ? '' : pick(rnd, [manscdpText(rnd, 'UTF-8'), sdpText(rnd), mansrtspText(rnd)]);
  const bodyBytes = Buffer.from(body, 'utf8');
  const compact = rnd() < 0.2;
  const headers: string[] = [
    `${compact ? 'v' : 'Via'}: ${via(rnd)}`,
    `${compact ? 'f' : 'From'}: ${nameAddr(rnd)};tag=${int(rnd, 1e9)}`,
    `${compact ? 't' : 'To'}: ${nameAddr(rnd)}${maybe(rnd, 0.4, () => `;tag=${int(rnd, 1e9)}`)}`,
    `${compact ? 'i' : 'Call-ID'}: ${int(rnd, 1e12)}${maybe(rnd, 0.5, () => `@${pick(rnd, HOSTS)}`)}`,
    `CSeq: ${num(rnd)} ${rnd() < 0.9 ? method : pick(rnd, METHODS)}`,
  ];
  if (rnd() < 0.6) headers.push(`${compact ? 'm' : 'Contact'}: ${rnd() < 0.1 ? '*' : nameAddr(rnd)}${maybe(rnd, 0.3, () => `;expires=${num(rnd)}`)}`);
  if (rnd() < 0.5) headers.push(`Max-Forwards: ${num(rnd)}`);
  if (rnd() < 0.4) headers.push(`Expires: ${num(rnd)}`);
  if (rnd() < 0.3) headers.push(`Route: ${nameAddr(rnd)}, ${nameAddr(rnd)}`);
  if (rnd() < 0.2) headers.push(`Record-Route: <${sipUri(rnd)};lr>`);
  if (rnd() < 0.3) headers.push(`Authorization: Digest username="${gbId(rnd)}", realm="3402000000", nonce="${int(rnd, 1e9)}", uri="${sipUri(rnd)}", response="${'0'.repeat(int(rnd, 40))}"${maybe(rnd, 0.5, () => `, qop=auth, nc=${num(rnd)}, cnonce="x"`)}${maybe(rnd, 0.3, () => ', algorithm=MD5')}`);
  if (rnd() < 0.2) headers.push(`WWW-Authenticate: Digest realm="3402000000", nonce="${int(rnd, 1e9)}"${maybe(rnd, 0.5, () => ', qop="auth,auth-int"')}${maybe(rnd, 0.3, () => ', stale=TRUE')}`);
  if (rnd() < 0.3) headers.push(`Subject: ${gbId(rnd)}:${num(rnd)},${gbId(rnd)}:${num(rnd)}`);
  if (rnd() < 0.2) headers.push(`Event: ${pick(rnd, ['Catalog', 'presence;id=1', ''])}`);
  if (rnd() < 0.7) headers.push(`${compact ? 'c' : 'Content-Type'}: ${pick(rnd, ['Application/MANSCDP+xml', 'application/sdp', 'Application/MANSRTSP', 'text/plain;charset=gb2312', ''])}`);
  const length = rnd() < 0.85 ? String(bodyBytes.length) : num(rnd);
  if (rnd() < 0.95) headers.push(`${compact ? 'l' : 'Content-Length'}: ${length}`);
  for (let i = headers.length - 1; i > 1 && rnd() < 0.2; i--) {
    const j = 1 + int(rnd, i);
    [headers[i], headers[j]] = [headers[j] as string, headers[i] as string];
  }
  return Buffer.concat([Buffer.from(`${start}\r\n${headers.join('\r\n')}\r\n\r\n`, 'latin1'), bodyBytes]);
}

// ---- MANSCDP (GB/T 28181 Annex A) ----

const ROOTS = ['Query', 'Response', 'Notify', 'Control'];
const CMD_TYPES = ['Keepalive', 'Catalog', 'DeviceInfo', 'DeviceStatus', 'RecordInfo', 'DeviceControl', 'Alarm', 'MobilePosition', 'MediaStatus', 'ConfigDownload', 'PresetQuery', 'Broadcast', 'DeviceConfig', 'Unknown'];

function element(rnd: Rnd, name: string, value: string): string {
  return rnd() < 0.03 ? `<${name}/>` : `<${name}>${value}</${name}>`;
}

function item(rnd: Rnd): string {
  const fields = [
    element(rnd, 'DeviceID', gbId(rnd)),
    element(rnd, 'Name', pick(rnd, TEXT)),
    maybe(rnd, 0.6, () => element(rnd, 'Manufacturer', pick(rnd, TEXT))),
    maybe(rnd, 0.5, () => element(rnd, 'ParentID', gbId(rnd))),
    maybe(rnd, 0.5, () => element(rnd, 'Status', pick(rnd, ['ON', 'OFF', 'OK', 'ERROR', '']))),
    maybe(rnd, 0.4, () => element(rnd, 'Parental', num(rnd))),
    maybe(rnd, 0.3, () => element(rnd, 'Longitude', pick(rnd, ['116.39', '-181', 'NaN', '']))),
    maybe(rnd, 0.3, () => element(rnd, 'StartTime', pick(rnd, ['2024-01-01T00:00:00', '2024-13-40T25:61:61', '', '2024-01-01 08:00:00']))),
    maybe(rnd, 0.3, () => element(rnd, 'EndTime', '2024-01-01T01:00:00')),
    maybe(rnd, 0.3, () => element(rnd, 'Event', pick(rnd, ['ON', 'OFF', 'ADD', 'DEL', 'UPDATE', 'VLOST']))),
    maybe(rnd, 0.2, () => element(rnd, 'Info', element(rnd, 'PTZType', num(rnd)))),
  ];
  return `<Item>${fields.join('\r\n')}</Item>`;
}

/** The text of a MANSCDP document (declaration naming `charset`), any root and CmdType. */
export function manscdpText(rnd: Rnd, charset: 'UTF-8' | 'GB2312'): string {
  const root = pick(rnd, ROOTS);
  const cmd = pick(rnd, CMD_TYPES);
  const parts = [element(rnd, 'CmdType', cmd), element(rnd, 'SN', num(rnd)), element(rnd, 'DeviceID', gbId(rnd))];
  const extra = 1 + int(rnd, 5);
  for (let i = 0; i < extra; i++) {
    switch (int(rnd, 10)) {
      case 0:
        parts.push(element(rnd, 'Status', pick(rnd, ['OK', 'ON', 'OFF', 'ERROR', ''])));
        break;
      case 1:
        parts.push(element(rnd, 'Result', pick(rnd, ['OK', 'ERROR', ''])));
        break;
      case 2:
        parts.push(element(rnd, 'SumNum', num(rnd)));
        break;
      case 3: {
        const n = int(rnd, 5);
        const list = pick(rnd, ['DeviceList', 'RecordList', 'AlarmList']);
        parts.push(`<${list} Num="${rnd() < 0.8 ? n : num(rnd)}">${Array.from({ length: n }, () => item(rnd)).join('\r\n')}</${rnd() < 0.95 ? list : 'DeviceList'}>`);
        break;
      }
      case 4:
        parts.push(element(rnd, 'PTZCmd', pick(rnd, ['A50F010180000036', 'A50F01021F0000D6', 'A50F0100000000B5', 'ZZZZ', '', 'A50F01'])));
        break;
      case 5:
        parts.push(element(rnd, pick(rnd, ['StartTime', 'EndTime']), pick(rnd, ['2024-01-01T00:00:00', 'x', ''])));
        break;
      case 6:
        parts.push(element(rnd, pick(rnd, ['DeviceName', 'Manufacturer', 'Model', 'Firmware']), pick(rnd, TEXT)));
        break;
      case 7:
        parts.push(element(rnd, pick(rnd, ['AlarmPriority', 'AlarmMethod', 'AlarmType']), num(rnd)));
        break;
      case 8:
        parts.push(element(rnd, pick(rnd, ['RecordCmd', 'GuardCmd', 'TeleBoot', 'Type']), pick(rnd, ['Record', 'StopRecord', 'SetGuard', 'Boot', 'all', ''])));
        break;
      default:
        parts.push(element(rnd, 'Info', element(rnd, pick(rnd, ['ControlPriority', 'Reason']), num(rnd))));
    }
  }
  const declared = rnd() < 0.9 ? charset : pick(rnd, ['GBK', 'GB18030', 'utf-8', 'ISO-8859-1', 'x']);
  return `<?xml version="1.0" encoding="${declared}"?>\r\n<${root}>\r\n${parts.join('\r\n')}\r\n</${root}>\r\n`;
}

/** A MANSCDP body in bytes: GB2312-encoded when it declares GB2312 (what most cameras send), else UTF-8. */
export function manscdpBody(rnd: Rnd, charset: 'UTF-8' | 'GB2312'): Buffer {
  const text = manscdpText(rnd, charset);
  return charset === 'GB2312' && rnd() < 0.9 ? encodeText(text, 'GB2312') : Buffer.from(text, 'utf8');
}

/** A keepalive body in the shapes devices send (GB/T 28181 §9.6, A.2.5). */
export function keepaliveText(rnd: Rnd): string {
  const nl = pick(rnd, ['\r\n', '\n', '']);
  const charset = pick(rnd, ['GB2312', 'UTF-8', 'gb2312', 'GBK']);
  const fields = [`<CmdType>${rnd() < 0.9 ? 'Keepalive' : pick(rnd, CMD_TYPES)}</CmdType>`, `<SN>${num(rnd)}</SN>`, `<DeviceID>${gbId(rnd)}</DeviceID>`, `<Status>${pick(rnd, ['OK', 'ON', 'ERROR', ''])}</Status>`];
  if (rnd() < 0.2) fields.push(`<Info>${maybe(rnd, 0.5, () => `<DeviceID>${gbId(rnd)}</DeviceID>`)}</Info>`);
  if (rnd() < 0.1) fields.reverse();
  return `${maybe(rnd, 0.95, () => `<?xml version="1.0"${maybe(rnd, 0.9, () => ` encoding="${charset}"`)}?>${nl}`)}<${rnd() < 0.95 ? 'Notify' : pick(rnd, ROOTS)}>${nl}${fields.join(nl)}${nl}</Notify>${nl}`;
}

// ---- SDP (RFC 4566) with GB/T 28181 y= (SSRC) and f= (media format) ----

/** An SDP offer/answer as GB28181 devices and platforms write them. */
export function sdpText(rnd: Rnd): string {
  const lines = [
    `v=${pick(rnd, ['0', '0', '1', ''])}`,
    `o=${gbId(rnd)} ${num(rnd)} ${num(rnd)} IN ${pick(rnd, ['IP4', 'IP6', 'XX'])} ${pick(rnd, HOSTS)}`,
    `s=${pick(rnd, ['Play', 'Playback', 'Download', 'Talk', 'EmbeddedNetDVR', ''])}`,
    maybe(rnd, 0.5, () => `u=${gbId(rnd)}:${num(rnd)}`),
    `c=IN ${pick(rnd, ['IP4', 'IP6'])} ${pick(rnd, HOSTS)}`,
    `t=${num(rnd)} ${num(rnd)}`,
    `m=${pick(rnd, ['video', 'audio', 'application'])} ${num(rnd)} ${pick(rnd, ['RTP/AVP', 'TCP/RTP/AVP', 'RTP/AVP/TCP', 'UDP'])} ${Array.from({ length: int(rnd, 4) }, () => num(rnd)).join(' ')}`,
    ...Array.from({ length: int(rnd, 5) }, () => `a=${pick(rnd, ['recvonly', 'sendonly', 'sendrecv', 'rtpmap:96 PS/90000', 'rtpmap:98 H264/90000', 'rtpmap:x', 'setup:passive', 'setup:active', 'connection:new', `downloadspeed:${num(rnd)}`, `filesize:${num(rnd)}`])}`),
    maybe(rnd, 0.8, () => `y=${pick(rnd, ['0100000001', '1200000001', '0', 'abcdefghij', '01000000012', num(rnd)])}`),
    maybe(rnd, 0.5, () => `f=${pick(rnd, ['v/2/4///a///', 'v/2/6/25/1/4096a/1/8/1', 'v/////a///', 'v/9/9/9/9/9a/9/9/9', 'x', ''])}`),
  ].filter((l) => l !== '');
  if (rnd() < 0.1) lines.push(lines[int(rnd, lines.length)] as string);
  return `${lines.join(pick(rnd, ['\r\n', '\r\n', '\n']))}\r\n`;
}

// ---- MANSRTSP (GB/T 28181 Annex B playback control) ----

export function mansrtspText(rnd: Rnd): string {
  const method = pick(rnd, ['PLAY', 'PAUSE', 'TEARDOWN', 'play', 'OPTIONS', 'GET_PARAMETER']);
  const headers = [
    `CSeq: ${num(rnd)}`,
    maybe(rnd, 0.5, () => `Range: npt=${pick(rnd, ['now', num(rnd)])}-${pick(rnd, ['', num(rnd)])}`),
    maybe(rnd, 0.4, () => `Scale: ${pick(rnd, ['0.25', '0.5', '1', '2', '4', '-1', '0', 'NaN', '1e308', num(rnd)])}`),
    maybe(rnd, 0.3, () => `PauseTime: ${pick(rnd, ['now', num(rnd)])}`),
  ].filter((l) => l !== '');
  return `${method} ${pick(rnd, ['RTSP/1.0', 'MANSRTSP/1.0', 'RTSP/2.0', ''])}\r\n${headers.join('\r\n')}\r\n${maybe(rnd, 0.5, () => '\r\n')}`;
}

// ---- JSON bodies ----

export const HOOK_KEYS = ['mediaServerId', 'general.mediaServerId', 'regist', 'app', 'stream', 'schema', 'vhost', 'local_port', 'stream_id', 'tcp_mode', 're_use_port', 'ssrc', 'data', 'ip', 'port', 'params', 'id', 'originType', 'totalReaderCount', '__proto__', 'constructor'];
export const PLATFORM_KEYS = ['serverId', 'name', 'domain', 'host', 'port', 'transport', 'password', 'registerExpiresS', 'keepaliveIntervalS', 'maxKeepaliveFailures', 'enabled', 'charset', 'localId', 'catalog', 'groupId', 'groupName', 'channels', 'deviceId', 'channelId', 'catalogGroupId', 'parentId', '__proto__', 'constructor', 'toString'];
