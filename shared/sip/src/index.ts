export * from './message/types.ts';
export { SipHeaders, canonicalHeaderName } from './message/headers.ts';
