// The bulk import's input (`npm run import -- devices.csv`): one device per line,
// `deviceId[,name[,password[,tenantId[,charset]]]]`, RFC 4180 quoting ("a, b" and "" inside quotes), an
// optional header line naming those columns in any order, blank lines and lines starting with # ignored.
// Pure: text in, rows and per-line problems out; the API checks each field again (POST /vms/devices).

export interface DeviceCsvRow {
  /** 1-based line number in the file, for messages. */
  readonly line: number;
  readonly body: Readonly<Record<string, string | null>> & { readonly deviceId: string };
}

export interface DeviceCsv {
  readonly rows: readonly DeviceCsvRow[];
  readonly problems: readonly { readonly line: number; readonly problem: string }[];
}

export const CSV_COLUMNS = ['deviceId', 'name', 'password', 'tenantId', 'charset'] as const;
/** Bounds that hold whatever the file holds. */
export const MAX_CSV_ROWS = 1_000_000;
const MAX_FIELD = 1024;
const GB_ID = /^\d{20}$/;

/** Splits one line into fields (RFC 4180 quotes); null when a quote is not closed. */
export function splitCsvLine(line: string): string[] | null {
  const out: string[] = [];
  let i = 0;
  for (;;) {
    let field = '';
    if (line[i] === '"') {
      i++;
      for (;;) {
        if (i >= line.length) return null;
        const c = line[i];
        if (c === '"') {
          if (line[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += c;
        i++;
      }
      while (i < line.length && line[i] !== ',') i++; // text after a closing quote is dropped
    } else {
      const next = line.indexOf(',', i);
      field = line.slice(i, next < 0 ? line.length : next);
      i = next < 0 ? line.length : next;
    }
    out.push(field.trim());
    if (i >= line.length) return out;
    i++; // the comma
  }
}

export function parseDeviceCsv(text: string, maxRows = MAX_CSV_ROWS): DeviceCsv {
  const rows: DeviceCsvRow[] = [];
  const problems: { line: number; problem: string }[] = [];
  let columns: readonly string[] = CSV_COLUMNS;
  const lines = text.split(/\r?\n/);
  let first = true;
  for (const [index, raw] of lines.entries()) {
    const line = index + 1;
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const fields = splitCsvLine(trimmed);
    if (fields === null) {
      problems.push({ line, problem: 'a quote is not closed' });
      continue;
    }
    if (first) {
      first = false;
      if (fields.some((f) => f.toLowerCase() === 'deviceid')) {
        const unknown = fields.filter((f) => !CSV_COLUMNS.some((c) => c.toLowerCase() === f.toLowerCase()));
        if (unknown.length > 0) {
          problems.push({ line, problem: `unknown column ${unknown.join(', ')} (columns: ${CSV_COLUMNS.join(', ')})` });
          return { rows: [], problems };
        }
        columns = fields.map((f) => CSV_COLUMNS.find((c) => c.toLowerCase() === f.toLowerCase()) ?? f);
        continue;
      }
    }
    if (fields.length > columns.length) {
      problems.push({ line, problem: `${fields.length} fields, at most ${columns.length}` });
      continue;
    }
    const body: Record<string, string | null> = {};
    for (const [i, f] of fields.entries()) {
      const col = columns[i] as string;
      if (f.length > MAX_FIELD) {
        problems.push({ line, problem: `${col} longer than ${MAX_FIELD} characters` });
        break;
      }
      if (f !== '') body[col] = f;
    }
    const deviceId = body['deviceId'];
    if (deviceId === undefined || deviceId === null || !GB_ID.test(deviceId)) {
      if (!problems.some((p) => p.line === line)) problems.push({ line, problem: 'deviceId must be a 20-digit code' });
      continue;
    }
    if (rows.length >= maxRows) {
      problems.push({ line, problem: `more than ${maxRows} devices: the rest is not read` });
      break;
    }
    rows.push({ line, body: { ...body, deviceId } });
  }
  return { rows, problems };
}
