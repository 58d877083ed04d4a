// Connects the device uplink events to the cluster's OwnershipRecorder (SPEC OWN-1, OWN-3, OWN-4)
// without the SIP side knowing about ownership: REGISTER / Keepalive / any MESSAGE → deviceSeen,
// unregister → deviceGone (compare-and-delete), a device moved to another instance → `onMoved`
// (the SIP side forgets the device's flow, so no control leaves from the old address).
import type { OwnershipRecorder } from '../cluster/ownership-recorder.ts';
import type { DeviceId } from '../devices/device.types.ts';
import type { DeviceEvents } from './device-events.ts';

export type OwnershipSink = Pick<OwnershipRecorder, 'deviceSeen' | 'deviceGone' | 'onMoved'>;

/** Returns a function that detaches everything. */
export function bridgeOwnership(events: DeviceEvents, recorder: OwnershipSink, onMoved: (deviceId: DeviceId) => void): () => void {
  // `at` is the SIP side's reading of the same clock (app.ts gives both sides one): no second read per keepalive
  const offUplink = events.on('uplink', ({ deviceId, kind, at }) => {
    if (kind === 'unregister') void recorder.deviceGone(deviceId); // never rejects
    else recorder.deviceSeen(deviceId, kind === 'register', at); // a REGISTER always writes its claim (OWN-4)
  });
  const offMoved = recorder.onMoved(({ deviceId }) => onMoved(deviceId));
  return () => {
    offUplink();
    offMoved();
  };
}
