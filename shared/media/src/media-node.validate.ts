/**
 * Checks a media node record before it is stored, so a typo in the console (a port range upside
 * down, an API URL without a scheme) fails at save time rather than at the first live view.
 */
import { MediaError } from './errors.ts';
import type { MediaNode } from './media-node.port.ts';

/** Fits the `media_node.id` column; ZLM's default mediaServerId is `your_server_id`. */
const ID_RE = /^[\w.:-]{1,64}$/;

export function validateMediaNode(node: MediaNode): MediaNode {
  const problems: string[] = [];
  if (!ID_RE.test(node.id)) problems.push('id must be 1-64 characters of [A-Za-z0-9_.:-]');
  if (!isHttpUrl(node.apiBaseUrl)) problems.push('apiBaseUrl must be an http(s) URL');
  if (node.hookBaseUrl !== '' && !isHttpUrl(node.hookBaseUrl)) problems.push('hookBaseUrl must be empty or an http(s) URL');
  if (node.secret === '') problems.push('secret must not be empty (hooks are verified with it)');
  if (node.sdpIp.trim() === '') problems.push('sdpIp must not be empty');
  if (node.streamIp.trim() === '') problems.push('streamIp must not be empty');
  const { min, max } = node.rtpPortRange;
  if (!isPort(min) || !isPort(max) || min > max) problems.push('rtpPortRange must be 1..65535 with min <= max');
  for (const key of ['httpPort', 'rtspPort', 'rtmpPort'] as const) {
    if (!isPort(node[key])) problems.push(`${key} must be 1..65535`);
  }
  if (!Number.isInteger(node.weight) || node.weight < 0 || node.weight > 10_000) problems.push('weight must be an integer 0..10000');
  // every problem at once, so a form can show them together (STYLE §1)
  if (problems.length > 0) throw new MediaError('MEDIA_ERR_INVALID_NODE', `media node ${JSON.stringify(node.id)}: ${problems.join('; ')}`);
  return node;
}

function isPort(n: number): boolean {
  return Number.isInteger(n) && n >= 1 && n <= 65_535;
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}
