// The media node's stream of a channel's talk audio (device → platform, sip/sip-broadcast.ts): ZLM
// publishes what the device sends back under this id (app `rtp`, startSendRtp `recv_stream_id`).
// Named here, apart from both users, so the hook wiring needs nothing from the SIP side.

export const talkStreamId = (channelId: string): string => `talk_${channelId}`;

export const isTalkStreamId = (streamId: string): boolean => /^talk_\d{20}$/.test(streamId);
