import { CsvError, parse } from 'csv-parse/sync';

/** A CSV file's records, each with the line it ends on (the header is the first record, line 1). */
export interface CsvTable {
  records: { values: string[]; line: number }[];
}

/** What reading a file gave: its table, or why it is not one (as data: it may come back from a worker thread). */
export type CsvTableOutcome = { ok: true; table: CsvTable } | { ok: false; message: string };

export interface CsvTableLimits {
  /** Parsing stops after this many records (the header included). */
  maxRecords: number;
  /** One record longer than this is refused (a file that is not split into lines as CSV). */
  maxRecordBytes: number;
}

/**
 * A text file's table: UTF-8 (with or without a byte order mark) or UTF-16 with one (Excel's "Unicode text"); comma,
 * semicolon (spreadsheets where the comma is the decimal mark) or tab separated, whichever the first line has most
 * of; RFC 4180 quoting. Any other encoding is refused rather than guessed: a wrong guess would mangle names.
 */
export function readCsvTable(bytes: Buffer, limits: CsvTableLimits): CsvTableOutcome {
  const text = decode(bytes);
  if (text === undefined) {
    return { ok: false, message: 'The file is not UTF-8 text. Save it as “CSV UTF-8” (Excel) or export it as UTF-8, then upload it again.' };
  }
  if (text.includes('\u0000')) return { ok: false, message: 'The file is not a CSV text file (it holds binary data).' };
  try {
    const parsed = parse(text, {
      delimiter: delimiterOf(text),
      bom: true,
      relax_column_count: true,
      skip_empty_lines: true,
      skip_records_with_empty_values: true,
      max_record_size: limits.maxRecordBytes,
      info: true,
      to: limits.maxRecords,
    }) as unknown as { record: string[]; info: { lines: number } }[];
    return { ok: true, table: { records: parsed.map(({ record, info }) => ({ values: record, line: info.lines })) } };
  } catch (error) {
    if (error instanceof CsvError) return { ok: false, message: `The file is not valid CSV: ${error.message}` };
    throw error;
  }
}

function decode(bytes: Buffer): string | undefined {
  try {
    if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le', { fatal: true }).decode(bytes);
    if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be', { fatal: true }).decode(bytes);
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

function delimiterOf(text: string): string {
  const end = text.search(/\r?\n/);
  const firstLine = end === -1 ? text : text.slice(0, end);
  const counts = [',', ';', '\t'].map((delimiter) => ({ delimiter, count: firstLine.split(delimiter).length - 1 }));
  counts.sort((a, b) => b.count - a.count);
  return counts[0]!.count > 0 ? counts[0]!.delimiter : ',';
}
