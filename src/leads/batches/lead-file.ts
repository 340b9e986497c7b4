import { AppError } from '../../errors.js';
import type { CsvTable } from '../../content/csv-table.js';
import type { LeadInput } from '../service.js';
import { MAX_BATCH_LEADS } from './limits.js';

type LeadField = 'firstName' | 'lastName' | 'email';

/** Header names of each column, compared without case, accents, spaces or punctuation ("First Name", "first_name"). */
const HEADER_NAMES: Record<LeadField, string[]> = {
  firstName: ['firstname', 'first', 'givenname', 'forename', 'vorname', 'prenom'],
  lastName: ['lastname', 'last', 'surname', 'familyname', 'nachname', 'nom'],
  email: ['email', 'emailaddress', 'mail', 'workemail', 'businessemail'],
};
const FIELD_LABELS: Record<LeadField, string> = { firstName: 'first name', lastName: 'last name', email: 'email' };

export interface FileLead extends LeadInput {
  /** The line of the file the lead ends on (the header is line 1). */
  line: number;
}

export interface LeadFile {
  /** The header of each lead column, as the file writes it. */
  columns: Record<LeadField, string>;
  /** Every data row, in file order (blank rows skipped). */
  rows: FileLead[];
}

export function leadFileError(message: string): AppError {
  return new AppError('validation_failed', message, [{ path: '/file', message }]);
}

function headerKey(header: string): string {
  return header
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
}

/**
 * The leads of a file's table: its first line names the first name, last name and email columns (any other columns
 * are ignored), and at most 1,000 leads follow. A table that is not such a list is a 400 saying why.
 */
export function leadsOfTable(table: CsvTable): LeadFile {
  const [header, ...data] = table.records;
  if (!header) throw leadFileError('The file is empty.');
  const keys = header.values.map(headerKey);
  const indexes = {} as Record<LeadField, number>;
  const missing: string[] = [];
  for (const field of Object.keys(HEADER_NAMES) as LeadField[]) {
    indexes[field] = keys.findIndex((key) => HEADER_NAMES[field].includes(key));
    if (indexes[field] === -1) missing.push(FIELD_LABELS[field]);
  }
  if (missing.length > 0) {
    const found = header.values.filter(Boolean).slice(0, 10).join(', ');
    throw leadFileError(`The file has no ${missing.join(', no ')} column: its first line must name them (it names ${found || 'nothing'}).`);
  }
  if (data.length === 0) throw leadFileError('The file has a header line but no leads.');
  if (data.length > MAX_BATCH_LEADS)
    throw leadFileError(`The file has more than ${MAX_BATCH_LEADS} leads; a batch takes at most ${MAX_BATCH_LEADS}. Split it.`);
  const cell = (values: string[], field: LeadField) => (values[indexes[field]] ?? '').trim();
  return {
    columns: { firstName: header.values[indexes.firstName]!, lastName: header.values[indexes.lastName]!, email: header.values[indexes.email]! },
    rows: data.map(({ values, line }) => ({
      line,
      firstName: cell(values, 'firstName'),
      lastName: cell(values, 'lastName'),
      email: cell(values, 'email'),
    })),
  };
}
