/**
 * Pure helpers of the migration runner: migration file names and splitting a SQL file into
 * statements (the pool runs one statement per query; multipleStatements stays off everywhere).
 */
import { MigrationError } from './errors.ts';

export interface MigrationFile {
  version: number;
  /** Description part of the name, e.g. "signal_node" for V002__signal_node.sql. */
  name: string;
  fileName: string;
}

const FILE_NAME = /^V(\d+)__([A-Za-z0-9_.-]+)\.sql$/;

/** V<number>__<description>.sql → its parts; null for files that are not migrations. */
export function parseMigrationFileName(fileName: string): MigrationFile | null {
  const m = FILE_NAME.exec(fileName);
  if (m === null) return null;
  return { version: Number(m[1]), name: m[2] as string, fileName };
}

/** Migration files among `fileNames`, ordered by version number (V2 before V10); duplicates are an error. */
export function orderMigrations(fileNames: readonly string[]): MigrationFile[] {
  const files = fileNames.map(parseMigrationFileName).filter((f): f is MigrationFile => f !== null);
  files.sort((a, b) => a.version - b.version);
  for (let i = 1; i < files.length; i++) {
    const prev = files[i - 1] as MigrationFile;
    const cur = files[i] as MigrationFile;
    if (prev.version === cur.version) {
      throw new MigrationError(`two migrations share version ${cur.version}: ${prev.fileName}, ${cur.fileName}`);
    }
  }
  return files;
}

/**
 * Splits on `;` outside quotes and comments. Handles '…', "…", `…` (with doubled-quote and
 * backslash escapes), -- and # line comments, and block comments. Comment-only pieces are dropped.
 * DELIMITER (stored procedures) is not supported: keep such code out of migrations.
 */
export function splitSqlStatements(sql: string): string[] {
  const out: string[] = [];
  let cur = '';
  let hasCode = false;
  let i = 0;
  const push = (): void => {
    if (hasCode) out.push(cur.trim());
    cur = '';
    hasCode = false;
  };
  while (i < sql.length) {
    const ch = sql[i] as string;
    const next = sql[i + 1];
    if (ch === "'" || ch === '"' || ch === '`') {
      const end = quoteEnd(sql, i, ch);
      cur += sql.slice(i, end);
      hasCode = true;
      i = end;
    } else if ((ch === '-' && next === '-' && /\s/.test(sql[i + 2] ?? ' ')) || ch === '#') {
      const end = sql.indexOf('\n', i);
      i = end < 0 ? sql.length : end;
    } else if (ch === '/' && next === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
      cur += ' ';
    } else if (ch === ';') {
      push();
      i++;
    } else {
      cur += ch;
      if (!/\s/.test(ch)) hasCode = true;
      i++;
    }
  }
  push();
  return out;
}

function quoteEnd(sql: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < sql.length) {
    const ch = sql[i];
    if (ch === '\\' && quote !== '`') i += 2;
    else if (ch === quote && sql[i + 1] === quote) i += 2;
    else if (ch === quote) return i + 1;
    else i++;
  }
  throw new MigrationError('unterminated quoted string in SQL');
}
