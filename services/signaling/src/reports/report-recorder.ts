// Stores what devices report (alarms, mobile positions) as the device side emits it. The device side
// has already answered the device; a failed store write is logged and dropped (SPEC CASC-4: a
// listener never breaks uplink handling). Runs on the device's owner, where the events arise.
import type { Logger } from 'pino';
import type { DeviceEvents } from '../events/device-events.ts';
import type { ReportStore } from './report-store.port.ts';

const orNull = (v: string | undefined): string | null => {
  const t = v?.trim();
  return t === undefined || t === '' ? null : t;
};

export function attachReportRecorder(events: DeviceEvents, store: ReportStore, log: Logger): () => void {
  const l = log.child({ component: 'reports' });
  const offs = [
    events.on('alarm', (e) => {
      const a = e.alarm;
      store
        .addAlarm({
          deviceId: e.deviceId,
          sourceId: a.deviceId,
          receivedAt: e.at,
          priority: a.alarmPriority.trim(),
          method: a.alarmMethod.trim(),
          type: orNull(a.alarmType),
          alarmTime: orNull(a.alarmTime),
          description: orNull(a.alarmDescription),
          longitude: orNull(a.longitude),
          latitude: orNull(a.latitude),
          via: e.via ?? 'message',
        })
        .catch((err: unknown) => l.warn({ err, deviceId: e.deviceId }, 'storing an alarm failed'));
    }),
    events.on('mobilePosition', (e) => {
      const p = e.position;
      store
        .addPosition({
          deviceId: e.deviceId,
          sourceId: p.deviceId,
          receivedAt: e.at,
          time: p.time.trim(),
          longitude: p.longitude.trim(),
          latitude: p.latitude.trim(),
          speed: orNull(p.speed),
          direction: orNull(p.direction),
          altitude: orNull(p.altitude),
        })
        .catch((err: unknown) => l.warn({ err, deviceId: e.deviceId }, 'storing a position failed'));
    }),
  ];
  return () => {
    for (const off of offs) off();
  };
}
