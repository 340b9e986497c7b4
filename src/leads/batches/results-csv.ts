import { stringify } from 'csv-stringify/sync';
import type { BatchResult } from './service.js';

const COLUMNS: (keyof BatchResult)[] = [
  'position',
  'first_name',
  'last_name',
  'email',
  'status',
  'job_id',
  'company_name',
  'company_description',
  'company_website',
  'email_subject',
  'email_body',
  'error',
  'completed_at',
];

/**
 * A spreadsheet reads a cell that starts with one of these as a formula (a tab or carriage return can hide one):
 * OWASP's CSV-injection advice is to prefix such a cell with a single quote, which the spreadsheet shows as text.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

function neutralized(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}

/**
 * A batch's results as CSV (RFC 4180: CRLF between records, every field quoted, quotes doubled), UTF-8 with a byte
 * order mark when asked (Excel reads UTF-8 without one as its local code page). At most 1,000 lines of a few KB.
 */
export function resultsCsv(results: BatchResult[], options: { bom: boolean }): string {
  return stringify(
    results.map((result) => COLUMNS.map((column) => result[column] ?? '')),
    {
      header: true,
      columns: COLUMNS,
      bom: options.bom,
      quoted: true,
      record_delimiter: 'windows',
      cast: { string: neutralized },
    },
  );
}
