/**
 * Loader for the GB28181 captures kept in the repository (@vms/fixtures, see its README). Each file opens with `#`
 * comment lines, then holds messages in one of three layouts:
 *   - blocks introduced by a `=====` line (optionally prefixed, `[Ellean run] =====`), each a full SIP
 *     message (start line, headers, blank line, body) or, in 16, just a body (`===== >>> MESSAGE`);
 *   - sections introduced by `----- ` (templates in 14 and 15): a bare body;
 *   - concatenated SIP messages with no separators (Hikvision capture, 03).
 * Bodies are classified by Content-Type when there are headers, by their first characters otherwise.
 * The files are UTF-8, so a body's bytes are exactly what was on the wire (UTF-8 under a GB2312
 * declaration included); line ends are LF here although the wire used CRLF.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GB28181_SAMPLES_DIR } from '@vms/fixtures';

export const SAMPLES_DIR = GB28181_SAMPLES_DIR;

export type BodyKind = 'manscdp' | 'sdp' | 'mansrtsp';

export interface SampleBody {
  file: string;
  /** 0-based position among the bodies of the file. */
  index: number;
  /** The block / section header line, or the SIP start line for unseparated captures. */
  label: string;
  /** SIP start line, when the block is a full SIP message. */
  startLine?: string;
  contentType?: string;
  kind: BodyKind;
  body: string;
  bytes: Buffer;
}

const BLOCK_RE = /^(?:\[[^\]]*\]\s*)?={5}/;
const SECTION_RE = /^-{5} /;
const START_LINE_RE = /^(?:[A-Z]+ \S+ SIP\/2\.0|SIP\/2\.0 \d{3}\b.*)$/;

export function sampleFiles(): string[] {
  return readdirSync(SAMPLES_DIR)
    .filter((f) => /^\d\d-.*\.txt$/.test(f))
    .sort();
}

export function loadSampleBodies(file: string): SampleBody[] {
  const lines = readFileSync(join(SAMPLES_DIR, file), 'utf8').split('\n');
  const content = lines.slice(lines.findIndex((l) => !l.startsWith('#')));
  const chunks = splitChunks(content);
  const out: SampleBody[] = [];
  for (const chunk of chunks) {
    const body = extractBody(chunk.lines);
    if (body === undefined) continue;
    out.push({ file, index: out.length, label: chunk.label, ...body, bytes: Buffer.from(body.body, 'utf8') });
  }
  return out;
}

export function loadAllSampleBodies(): SampleBody[] {
  return sampleFiles().flatMap(loadSampleBodies);
}

interface Chunk {
  label: string;
  lines: string[];
}

function splitChunks(lines: string[]): Chunk[] {
  const chunks: Chunk[] = [];
  const hasSeparators = lines.some((l) => BLOCK_RE.test(l) || SECTION_RE.test(l));
  let current: Chunk | undefined;
  for (const line of lines) {
    const separator = hasSeparators ? BLOCK_RE.test(line) || SECTION_RE.test(line) : START_LINE_RE.test(line);
    if (separator) {
      current = { label: line, lines: hasSeparators ? [] : [line] };
      chunks.push(current);
    } else {
      current?.lines.push(line);
    }
  }
  return chunks;
}

function extractBody(lines: string[]): Omit<SampleBody, 'file' | 'index' | 'label' | 'bytes'> | undefined {
  const first = lines.findIndex((l) => l.trim() !== '');
  if (first < 0) return undefined;
  if (!START_LINE_RE.test(lines[first] as string)) {
    const body = trimTrailingBlankLines(lines.slice(first)).join('\n');
    return { kind: sniffKind(body), body };
  }
  const blank = lines.findIndex((l, i) => i > first && l.trim() === '');
  if (blank < 0) return undefined;
  const headers = lines.slice(first + 1, blank);
  const body = trimTrailingBlankLines(lines.slice(blank + 1)).join('\n');
  if (body.trim() === '') return undefined;
  const contentType = headers
    .map((h) => /^content-type\s*:\s*(.*)$/i.exec(h)?.[1])
    .find((v) => v !== undefined)
    ?.trim();
  const kind = contentType === undefined ? sniffKind(body) : kindOfContentType(contentType);
  const out = { kind, body, startLine: lines[first] as string };
  return contentType === undefined ? out : { ...out, contentType };
}

function kindOfContentType(ct: string): BodyKind {
  if (/manscdp/i.test(ct)) return 'manscdp';
  if (/mansrtsp/i.test(ct)) return 'mansrtsp';
  if (/sdp/i.test(ct)) return 'sdp';
  throw new Error(`unexpected Content-Type in sample: ${ct}`);
}

function sniffKind(body: string): BodyKind {
  const start = body.trimStart();
  if (start.startsWith('<')) return 'manscdp';
  if (start.startsWith('v=')) return 'sdp';
  if (/^[A-Z]+ RTSP\/1\.0/.test(start)) return 'mansrtsp';
  throw new Error(`cannot classify sample body: ${start.slice(0, 20)}`);
}

function trimTrailingBlankLines(lines: string[]): string[] {
  let end = lines.length;
  while (end > 0 && (lines[end - 1] as string).trim() === '') end--;
  return lines.slice(0, end);
}

/**
 * The template sections of 14 keep the tool's `${var}` placeholders. Values that make them concrete
 * (SSDConfig.properties style), chosen by hand; used for SDP templates whose port/time must be numbers.
 */
export const TEMPLATE_VALUES: Readonly<Record<string, string>> = {
  mediaDestID: '34020000002000000001',
  mediaDestIP: '192.168.1.10',
  localMediaPort: '30000',
  mediaDestPort: '30002',
  sdp_a: 'recvonly',
  historycameraID: '34020000001310000001',
  historyTime: '1289475977 1289562377',
};

export function fillTemplate(body: string): string {
  return body.replace(/\$\{(\w+)\}/g, (whole, name: string) => TEMPLATE_VALUES[name] ?? whole);
}
