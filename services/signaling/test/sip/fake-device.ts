// A GB28181 device for in-process tests, built on our own SIP stack: registers (digest), sends
// MANSCDP MESSAGEs, and answers the platform's MESSAGEs through a per-test handler.
import { parseManscdp, type ManscdpMessage } from '@vms/gb28181';
import { createSipStack, type SipRequest, type SipResponse, type SipStack, type TransportName } from '@vms/sip';

export const SERVER_ID = '34020000002000000001';
export const REALM = '3402000000';

export interface Received {
  readonly request: SipRequest;
  readonly msg: ManscdpMessage;
}

export interface FakeDevice {
  readonly id: string;
  readonly stack: SipStack;
  readonly received: Received[];
  register(opts?: { expires?: number; password?: string; username?: string }): Promise<SipResponse>;
  /** MESSAGE with a MANSCDP body to the platform. */
  send(body: string | Buffer): Promise<SipResponse>;
  /** Called for each MESSAGE from the platform after the 200 went out. */
  onMessage(handler: (r: Received) => void | Promise<void>): void;
  /** Resolves with the next MESSAGE from the platform whose CmdType is `cmdType`. */
  next(cmdType: string): Promise<Received>;
  close(): Promise<void>;
}

export async function startFakeDevice(id: string, platformPort: number, transport: TransportName = 'udp'): Promise<FakeDevice> {
  const stack = await createSipStack({ host: '127.0.0.1', port: 0, transports: ['udp', 'tcp'] });
  const received: Received[] = [];
  const waiters: { cmdType: string; resolve: (r: Received) => void }[] = [];
  let handler: (r: Received) => void | Promise<void> = () => {};
  const target = { host: '127.0.0.1', port: platformPort, transport };
  const from = `<sip:${id}@${REALM}>`;

  stack.onRequest('MESSAGE', (request, ctx) => {
    ctx.reply(200);
    const r: Received = { request, msg: parseManscdp(request.body) };
    received.push(r);
    const i = waiters.findIndex((w) => w.cmdType === r.msg.cmdType);
    if (i >= 0) waiters.splice(i, 1)[0]?.resolve(r);
    void Promise.resolve(handler(r)).catch(() => {});
  });

  return {
    id,
    stack,
    received,
    register(opts = {}) {
      return stack.request(
        {
          method: 'REGISTER',
          uri: `sip:${SERVER_ID}@127.0.0.1:${platformPort}`,
          headers: { From: from, To: from, Expires: opts.expires ?? 3600 },
          target,
        },
        opts.password === undefined ? {} : { auth: { username: opts.username ?? id, password: opts.password } },
      );
    },
    send(body) {
      return stack.request({
        method: 'MESSAGE',
        uri: `sip:${SERVER_ID}@${REALM}`,
        headers: { From: from, To: `<sip:${SERVER_ID}@${REALM}>` },
        body,
        contentType: 'Application/MANSCDP+xml',
        target,
      });
    },
    onMessage(h) {
      handler = h;
    },
    next(cmdType) {
      const seen = received.find((r) => r.msg.cmdType === cmdType && !(r as { taken?: boolean }).taken);
      if (seen !== undefined) {
        (seen as { taken?: boolean }).taken = true;
        return Promise.resolve(seen);
      }
      return new Promise((resolve) =>
        waiters.push({
          cmdType,
          resolve: (r) => {
            (r as { taken?: boolean }).taken = true;
            resolve(r);
          },
        }),
      );
    },
    close: () => stack.close(),
  };
}

/** MANSCDP bodies as the captured devices write them (samples 04, 05, 07, 10). */
export const bodies = {
  keepalive: (id: string, sn = 1) =>
    `<?xml version="1.0" encoding="GB2312"?>\r\n<Notify>\r\n<CmdType>Keepalive</CmdType>\r\n<SN>${sn}</SN>\r\n<DeviceID>${id}</DeviceID>\r\n<Status>OK</Status>\r\n</Notify>\r\n`,
  catalogPage: (id: string, sn: string | number, sumNum: number, channels: readonly string[]) =>
    `<?xml version="1.0" encoding="UTF-8"?>\r\n<Response><CmdType>Catalog</CmdType><SN>${sn}</SN><DeviceID>${id}</DeviceID><SumNum>${sumNum}</SumNum>` +
    `<DeviceList Num="${channels.length}">${channels
      .map((ch) => `<Item><DeviceID>${ch}</DeviceID><Name>cam ${ch.slice(-2)}</Name><Manufacturer>SimCamera</Manufacturer><ParentID>${id}</ParentID><Status>ON</Status><Info><PTZType>1</PTZType></Info></Item>`)
      .join('')}</DeviceList></Response>`,
  recordPage: (id: string, channel: string, sn: string | number, sumNum: number, hours: readonly number[]) =>
    `<?xml version="1.0" encoding="GB2312"?>\r\n<Response><CmdType>RecordInfo</CmdType><SN>${sn}</SN><DeviceID>${id}</DeviceID><Name>Cam</Name><SumNum>${sumNum}</SumNum>` +
    `<RecordList Num="${hours.length}">${hours
      .map(
        (h) =>
          `<Item><DeviceID>${channel}</DeviceID><Name>rec${h}</Name><FilePath>/rec/${h}.mp4</FilePath><Address>Address</Address>` +
          `<StartTime>2025-06-01T${String(h).padStart(2, '0')}:00:00</StartTime><EndTime>2025-06-01T${String(h).padStart(2, '0')}:59:59</EndTime>` +
          `<Secrecy>0</Secrecy><Type>time</Type></Item>`,
      )
      .join('')}</RecordList></Response>`,
  deviceInfo: (id: string, sn: string | number) =>
    `<?xml version="1.0" encoding="GB2312"?><Response><CmdType>DeviceInfo</CmdType><SN>${sn}</SN><DeviceID>${id}</DeviceID><DeviceName>Superdock</DeviceName>` +
    `<Manufacturer>StrawberryInno</Manufacturer><Model>test</Model><Firmware>1.0</Firmware><Channel>2</Channel><Result>OK</Result></Response>`,
  deviceStatus: (id: string, sn: string | number) =>
    `<?xml version="1.0" encoding="UTF-8"?>\r\n<Response><CmdType>DeviceStatus</CmdType><SN>${sn}</SN><DeviceID>${id}</DeviceID><Result>OK</Result>` +
    `<Online>ONLINE</Online><Status>ON</Status><Encode>ON</Encode><Record>OFF</Record><DeviceTime>2025-06-01T08:00:00</DeviceTime></Response>`,
  alarm: (id: string, sn: number) =>
    `<?xml version="1.0" encoding="GB2312"?>\r\n<Notify><CmdType>Alarm</CmdType><SN>${sn}</SN><DeviceID>${id}</DeviceID><AlarmPriority>1</AlarmPriority>` +
    `<AlarmMethod>2</AlarmMethod><AlarmTime>2025-06-01T08:00:00</AlarmTime></Notify>`,
};
