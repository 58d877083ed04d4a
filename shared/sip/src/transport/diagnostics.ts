import diagnosticsChannel from 'node:diagnostics_channel';
import type { SipMessage } from '../message/types.ts';
import type { Flow, SendTarget } from './flow.ts';

/**
 * Hot-path events (STYLE §9): the stack publishes, metrics and tracing subscribe. Publishing is
 * skipped when nobody listens, so the cost on the hot path is one property read.
 */
export const SIP_CHANNELS = Object.freeze({
  messageIn: 'vms.sip.message_in',
  messageOut: 'vms.sip.message_out',
  parseError: 'vms.sip.parse_error',
  dropped: 'vms.sip.dropped',
  connection: 'vms.sip.connection',
  transactionTimeout: 'vms.sip.transaction_timeout',
  datagramAnswer: 'vms.sip.datagram_answer',
});

export interface MessageInEvent {
  message: SipMessage;
  flow: Flow;
  bytes: number;
}
export interface MessageOutEvent {
  message: SipMessage;
  target: SendTarget;
  bytes: number;
}
export interface ParseErrorEvent {
  flow: Flow;
  error: unknown;
  bytes: number;
  /** A 400 Bad Request went back. */
  answered: boolean;
}
export type DropReason = 'unparseable' | 'oversize' | 'framing' | 'connection-limit' | 'unmatched-response' | 'closing';
export interface DroppedEvent {
  flow: Flow | undefined;
  reason: DropReason;
}
export interface ConnectionEvent {
  flow: Flow;
  event: 'open' | 'close' | 'idle-timeout' | 'message-timeout';
}
/**
 * A request answered by the datagram shortcut (a stateless handler on the raw UDP bytes): neither
 * message_in nor message_out is published for it, so counts by method and status see it here.
 */
export interface DatagramAnswerEvent {
  method: string;
  status: number;
}
export interface TransactionTimeoutEvent {
  method: string;
  callId: string | undefined;
  target: string;
}

export const channels = {
  messageIn: diagnosticsChannel.channel(SIP_CHANNELS.messageIn),
  messageOut: diagnosticsChannel.channel(SIP_CHANNELS.messageOut),
  parseError: diagnosticsChannel.channel(SIP_CHANNELS.parseError),
  dropped: diagnosticsChannel.channel(SIP_CHANNELS.dropped),
  connection: diagnosticsChannel.channel(SIP_CHANNELS.connection),
  transactionTimeout: diagnosticsChannel.channel(SIP_CHANNELS.transactionTimeout),
  datagramAnswer: diagnosticsChannel.channel(SIP_CHANNELS.datagramAnswer),
};

export function publish<T extends object>(ch: diagnosticsChannel.Channel, event: T): void {
  if (ch.hasSubscribers) ch.publish(event);
}

/** Per-stack counters, exposed by `stack.stats()`; monotonically increasing except the gauges. */
export interface TransportCounters {
  messagesIn: number;
  messagesOut: number;
  parseErrors: number;
  badRequestsSent: number;
  dropped: number;
  oversize: number;
  sendErrors: number;
  keepalivesAnswered: number;
  tcpAccepted: number;
  tcpRejected: number;
  tcpIdleClosed: number;
  /** TCP connections closed because a message was not completed within the message timeout. */
  tcpMessageTimeouts: number;
  /** gauge */
  tcpOpen: number;
}

export function newCounters(): TransportCounters {
  return {
    messagesIn: 0,
    messagesOut: 0,
    parseErrors: 0,
    badRequestsSent: 0,
    dropped: 0,
    oversize: 0,
    sendErrors: 0,
    keepalivesAnswered: 0,
    tcpAccepted: 0,
    tcpRejected: 0,
    tcpIdleClosed: 0,
    tcpMessageTimeouts: 0,
    tcpOpen: 0,
  };
}
