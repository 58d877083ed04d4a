// @vms/gb28181: the GB/T 28181 protocol vocabulary. Pure code: bodies, ids, SDP text, PTZ bytes.
// No SIP transport, no cluster code; nothing runs at import.
export * from './errors.ts';
export * from './charset.ts';
export { ATTRIBUTE_PREFIX, TEXT_KEY, type ManscdpNode, type ManscdpValue } from './xml.ts';
// Readers for the `fields` of generic (unmodelled) messages: case-insensitive, Item always an array.
export { getItems, getNode, getText, getTexts, requireText } from './fields.ts';
export * from './manscdp.ts';
export * from './commands/common.ts';
export * from './commands/keepalive.ts';
export * from './commands/keepalive-scan.ts';
export * from './commands/keepalive-shape.ts';
export * from './commands/catalog-item.ts';
export * from './commands/catalog.ts';
export * from './commands/catalog-paging.ts';
export * from './commands/device-info.ts';
export * from './commands/device-status.ts';
export * from './commands/record-info.ts';
export * from './commands/device-control.ts';
export * from './commands/alarm.ts';
export * from './commands/mobile-position.ts';
export * from './commands/media-status.ts';
export * from './commands/config-download.ts';
export * from './commands/preset-query.ts';
export * from './commands/broadcast.ts';
export * from './commands/device-config.ts';
export * from './commands/queries-2022.ts';
export * from './commands/dispatch.ts';
export * from './ptz.ts';
export * from './gb-id.ts';
export * from './sdp/sdp.ts';
export * from './sdp/ssrc.ts';
export * from './sdp/media-format.ts';
export * from './sdp/offer.ts';
export * from './mansrtsp.ts';
export * from './time.ts';
export * from './sn.ts';
