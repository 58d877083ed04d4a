export * from './message/types.ts';
export { SipHeaders, canonicalHeaderName } from './message/headers.ts';
export { detachString } from './message/detach.ts';
// --- message layer: parser, serializer, accessors, builders, digest (owner: message/auth) ---
// One error catalog for the whole package (message, digest, stack codes) and one code → SIP status table.
export {
  SIP_ERROR_STATUS, SipError, SipParseError, SipStackError, SipTimeoutError, SipTransportError, SipRejectedError, sipStatusForError,
} from './errors.ts';
export type { SipErrorCode, SipStackErrorCode, SipParseErrorDetails } from './errors.ts';
export { SipStatus, SIP_REASON_PHRASES, reasonPhrase } from './status.ts';
export type { SipStatusName } from './status.ts';
export { parseSipMessage, BODY_LENGTH_MISCOUNTED, type ParseOptions } from './message/parse.ts';
export { serializeSipMessage, MISDECLARED_CONTENT_LENGTH } from './message/serialize.ts';
export { SipStreamFramer, DEFAULT_MAX_STREAM_MESSAGE_BYTES } from './message/framer.ts';
export type { SipStreamFramerOptions, StreamKeepalive } from './message/framer.ts';
export { MAX_CONTENT_LENGTH } from './message/content-length.ts';
export {
  getVias, getTopVia, getFrom, getTo, getCallId, getCSeq, getContacts, isWildcardContact,
  getRouteSet, getExpires, getMaxForwards, getContentType,
} from './message/accessors.ts';
export type { ContentType } from './message/accessors.ts';
export { parseUri, formatUri } from './message/uri.ts';
export { parseNameAddr, formatNameAddr } from './message/name-addr.ts';
export { parseVia, parseViaHop, formatVia } from './message/via.ts';
export { splitHeaderValues, parseParams, formatParams, quote, unquote } from './message/lex.ts';
export {
  createRequest, createResponse, generateTag, generateBranch, generateCallId,
  BRANCH_MAGIC_COOKIE, DEFAULT_MAX_FORWARDS,
} from './message/build.ts';
export type { CreateRequestOptions, CreateResponseOptions } from './message/build.ts';
export {
  parseDigestChallenge, parseDigestCredentials, formatDigestChallenge, formatDigestCredentials,
} from './auth/digest.header.ts';
export type { DigestChallenge, DigestCredentials } from './auth/digest.header.ts';
export { computeDigestResponse, checkDigestResponse, formatNonceCount } from './auth/digest.compute.ts';
export type { DigestAlgorithm, DigestInput } from './auth/digest.compute.ts';
export { DigestServer, DEFAULT_NONCE_TTL_MS, gbRealmFromServerId } from './auth/digest.server.ts';
export type { DigestServerOptions, DigestFailure, DigestVerifyResult, DigestVerifyInput, ChallengeOptions } from './auth/digest.server.ts';
export { digestUriMatches } from './auth/digest-uri.ts';
export { buildAuthorization } from './auth/digest.client.ts';
export type { AuthorizationOptions } from './auth/digest.client.ts';
// --- transport, transactions, dialogs, user agent (owner: stack) ---
export { systemClock, FakeClock } from './clock.ts';
export type { Clock, TimerHandle } from './clock.ts';
export { T1, T2, T4, TIMER_D_UNRELIABLE, DEFAULT_TIMERS, resolveTimers, timerValues } from './transaction/timers.ts';
export type { TimerConfig, TimerValues } from './transaction/timers.ts';
export { createSipStack, SipStack } from './ua/stack.ts';
export type { SipStackStats } from './ua/stack.ts';
export { rawResponder, type RawResponder } from './ua/server-context.ts';
export type {
  SipStackOptions, OutgoingRequestSpec, RequestOptions, UacOptions, UacResult, ReplyOptions, AcceptOptions,
  ServerContext, RequestHandler, StatelessHandler, StatelessAnswer, StatelessOptions, StatelessRequest, HeaderInput, RequestContext, DigestAuth,
} from './ua/types.ts';
export { Dialog } from './dialog/dialog.ts';
export type { DialogEvents, DialogRequestOptions, DialogTerminationReason } from './dialog/dialog.ts';
export type { DialogState, DialogKind, DialogRole } from './dialog/dialog-state.ts';
export { flowKey, isFlow } from './transport/flow.ts';
export type { Flow, HostTarget, SendTarget, TransportName } from './transport/flow.ts';
export { SIP_CHANNELS } from './transport/diagnostics.ts';
export type {
  MessageInEvent, MessageOutEvent, ParseErrorEvent, DroppedEvent, DropReason, ConnectionEvent, TransactionTimeoutEvent, DatagramAnswerEvent,
  TransportCounters,
} from './transport/diagnostics.ts';
export { silentLogger } from './transport/logger.ts';
export {
  DEFAULT_MAX_MESSAGE_BYTES,
  DEFAULT_MAX_TCP_CONNECTIONS,
  DEFAULT_MAX_TCP_CONNECTIONS_PER_IP,
  DEFAULT_TCP_IDLE_TIMEOUT_MS,
  DEFAULT_TCP_MESSAGE_TIMEOUT_MS,
} from './transport/transport.ts';
export type { SipLogger } from './transport/logger.ts';
// The bare transport (RFC 3261 §18) without transactions: for a stateless proxy (services/sip-edge).
export { SipTransport, type TransportOptions, type InboundHandler } from './transport/transport.ts';
export { nodeSetsReusePort, listenFdsFromEnv, LISTEN_FD_NAMES, type PortSharing } from './transport/port-sharing.ts';
// Byte-level pieces of the datagram shortcut, for the edge's forwarding fast path (services/sip-edge).
export { type DatagramShortcut } from './transport/transport.ts';
export { stampCanonicalViaAt } from './transport/canonical-via.ts';
export { peekDatagramRequest, stampDatagramVia, buildDatagramResponse } from './transport/datagram-shortcut.ts';
export { BAD_MAX_FORWARDS, cseqMatches, decodeLatin1, HeaderScan, requestLineEnd, requestMethod, scanHeaderSection } from './transport/header-scan.ts';
// Overload control of REGISTER (issue 11): the pure controller, its sampler and the receive-queue reader,
// for the signaling instances and the SIP edge.
export {
  answersChallenge, CALM_ARRIVALS, DEFAULT_SHED_POLICY, FAR_BEHIND, fromUser, nextQueueReadAt, QUEUE_READ_BUDGET, QUEUE_READ_MAX_SOCKETS,
  queueSampleNeeded, receiveBufferStep, RegisterShedder, shedBufferHidesMark, udpReceiveQueueBytes, udpSocketsInUse, type ShedPolicy, type ShedSample,
} from './overload/register-shedding.ts';
export { ownUdpSocketInode, readReceiveQueue, udpSocketsOfNamespace } from './overload/receive-queue.ts';
export { QueueProbe, QueueDelayReading } from './overload/queue-probe.ts';
export { createShedSampler, QUEUE_READING_FRESH_MS, SAMPLE_MS, type ShedSampler, type ShedSamplerOptions } from './overload/shed-sampler.ts';
