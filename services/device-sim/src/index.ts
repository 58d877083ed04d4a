// @vms/device-sim: a GB/T 28181 device (IPC/NVR) simulator on @vms/sip + @vms/gb28181. Library entry
// point; nothing runs at import (the CLI is main.ts).
export { createSimulatedDevice, SimulatedDevice } from './device.ts';
export type { SimulatedDeviceEvents, AlarmInput } from './device.ts';
export { createDeviceFleet, DEFAULT_START_CONCURRENCY } from './fleet.ts';
export type { DeviceFleet, DeviceFleetOptions } from './fleet.ts';
export { resolveDeviceOptions, MAX_RTP_PAYLOAD_BYTES } from './options.ts';
export type { SimulatedDeviceOptions, ResolvedDeviceOptions } from './options.ts';
export { DSIM_ERROR_SIP_STATUS, DeviceSimError, DeviceSimConfigError, RegisterRejectedError } from './errors.ts';
export type { DeviceSimErrorCode } from './errors.ts';
export { defaultChannelIds, deviceIdAt, CHANNEL_TYPE_CODE } from './channels.ts';
export type { SimChannel } from './channels.ts';
export type { ReceivedCommand, RecordedControl } from './commands.ts';
export { MediaSession } from './session.ts';
export type { SessionState, MediaSessionEvents } from './session.ts';
export type { MediaPlan, SessionKind } from './sdp-answer.ts';
export type { Subscription, SubscriptionKind } from './subscriptions.ts';
export type { MediaSinkMode, MediaSinkStats } from './media/sink.ts';
// Media helpers, also what a test platform needs to check the stream it receives.
export { PACK_START_CODE, SYSTEM_HEADER_START_CODE, PSM_START_CODE, VIDEO_STREAM_ID, STREAM_TYPE_H264, readTimestamp } from './media/ps.ts';
export { parseRtpHeader, Rfc4571Deframer, PS_PAYLOAD_TYPE, RTP_HEADER_BYTES } from './media/rtp.ts';
export type { RtpHeader } from './media/rtp.ts';
export { parseCli, USAGE } from './cli.ts';
export { createJsonLogger, LOG_LEVELS } from './logger.ts';
export type { LogLevel } from './logger.ts';
