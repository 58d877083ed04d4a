// Loads the captured GB28181 exchanges kept in the repository (@vms/fixtures, see its README) as wire bytes.
//
// The files are text with LF line endings: `#` comment lines first, then messages separated by
// marker lines (`===== …`, `[run] ===== …`, `----- [template]`) or, in the Hikvision capture that has
// no markers, by blank lines before a start line. Headers went over the wire with CRLF (the file
// comments say so, and the "(N bytes)" markers confirm it), but bodies differ per implementation:
// some joined body lines with LF (Python "\n".join, xml2js), some with CRLF, with or without a final
// newline. The loader rebuilds the body in the variant whose byte length equals the message's own
// Content-Length, read here with an independent regex. Where no variant matches, the capture's
// Content-Length is itself wrong; those messages are flagged `mismatch` and the tests pin them.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { GB28181_SAMPLES_DIR } from '@vms/fixtures';

export const SAMPLES_DIR = GB28181_SAMPLES_DIR;

export type BodyVariant = 'none' | 'crlf' | 'crlf+final' | 'lf' | 'lf+final' | 'mismatch';

export interface SampleMessage {
  file: string;
  /** 0-based position among the SIP messages of the file. */
  index: number;
  marker: string | null;
  startLine: string;
  wire: Buffer;
  /** Header lines as text (name and value split at the first colon, value trimmed), file order. */
  headerLines: Array<[string, string]>;
  /** Content-Length as written in the capture, or null. */
  declaredLength: number | null;
  /** The "(N bytes)" of the marker line, when the capture recorded it. */
  annotatedBytes: number | null;
  bodyVariant: BodyVariant;
}

const START_LINE = /^(?:SIP\/2\.0 \d{3}(?: |$)|[A-Z]+ \S+ SIP\/2\.0$)/;
const MARKER = /=====|^----- /;
const CONTENT_LENGTH = /^(?:content-length|l)[ \t]*:[ \t]*(\d+)[ \t]*$/i;

export function sampleFiles(dir = SAMPLES_DIR): string[] {
  return readdirSync(dir).filter((f) => f.endsWith('.txt')).sort();
}

export function loadSampleFile(file: string, dir = SAMPLES_DIR): SampleMessage[] {
  // latin1 keeps every byte (the Chinese names are UTF-8 bytes in the file, as on the wire).
  const lines = readFileSync(join(dir, file)).toString('latin1').split('\n');
  let first = 0;
  while (first < lines.length && lines[first]!.startsWith('#')) first++;
  const body = lines.slice(first);
  const blocks = body.some((l) => MARKER.test(l)) ? splitAtMarkers(body) : splitAtStartLines(body);
  const out: SampleMessage[] = [];
  for (const block of blocks) {
    const msg = buildMessage(file, out.length, block);
    if (msg !== undefined) out.push(msg);
  }
  return out;
}

export function loadAllSamples(dir = SAMPLES_DIR): SampleMessage[] {
  return sampleFiles(dir).flatMap((f) => loadSampleFile(f, dir));
}

interface Block {
  marker: string | null;
  lines: string[];
}

function splitAtMarkers(lines: string[]): Block[] {
  const blocks: Block[] = [];
  for (const line of lines) {
    if (MARKER.test(line)) blocks.push({ marker: line, lines: [] });
    else blocks.at(-1)?.lines.push(line);
  }
  return blocks;
}

function splitAtStartLines(lines: string[]): Block[] {
  const blocks: Block[] = [];
  lines.forEach((line, i) => {
    if (START_LINE.test(line) && (i === 0 || lines[i - 1] === '')) blocks.push({ marker: null, lines: [line] });
    else blocks.at(-1)?.lines.push(line);
  });
  return blocks;
}

function buildMessage(file: string, index: number, block: Block): SampleMessage | undefined {
  const lines = [...block.lines];
  while (lines.length > 0 && lines[0] === '') lines.shift();
  while (lines.length > 0 && lines.at(-1) === '') lines.pop();
  const startLine = lines[0];
  if (startLine === undefined || !START_LINE.test(startLine)) return undefined; // body-only template block

  const blank = lines.indexOf('');
  const head = blank === -1 ? lines : lines.slice(0, blank);
  const bodyLines = blank === -1 ? [] : lines.slice(blank + 1);
  const headerLines: Array<[string, string]> = head.slice(1).map((l) => {
    const colon = l.indexOf(':');
    return [l.slice(0, colon).trim(), l.slice(colon + 1).trim()];
  });
  let declaredLength: number | null = null;
  for (const l of head) {
    const m = CONTENT_LENGTH.exec(l);
    if (m !== null) declaredLength = Number(m[1]);
  }
  const annotated = block.marker === null ? null : /\((\d+) bytes\)/.exec(block.marker);
  const annotatedBytes = annotated === null ? null : Number(annotated[1]);

  const headText = `${head.join('\r\n')}\r\n\r\n`;
  const headBytes = Buffer.byteLength(headText, 'latin1');
  let bodyVariant: BodyVariant = 'none';
  let bodyText = '';
  if (bodyLines.length > 0) {
    const candidates: Array<[BodyVariant, string]> = [
      ['crlf', bodyLines.join('\r\n')],
      ['crlf+final', `${bodyLines.join('\r\n')}\r\n`],
      ['lf', bodyLines.join('\n')],
      ['lf+final', `${bodyLines.join('\n')}\n`],
    ];
    const byLength = candidates.find(([, t]) => Buffer.byteLength(t, 'latin1') === declaredLength);
    // No variant matches the declared length: prefer the one matching the recorded datagram size.
    const bySize = candidates.find(([, t]) => headBytes + Buffer.byteLength(t, 'latin1') === annotatedBytes);
    const chosen = byLength ?? bySize ?? candidates[0]!;
    bodyVariant = byLength === undefined ? 'mismatch' : byLength[0];
    bodyText = chosen[1];
  }
  return {
    file,
    index,
    marker: block.marker,
    startLine,
    wire: Buffer.from(headText + bodyText, 'latin1'),
    headerLines,
    declaredLength,
    annotatedBytes,
    bodyVariant,
  };
}
