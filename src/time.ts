import { invalidField } from './errors.js';

export function nowIso(): string {
  return new Date().toISOString();
}

/** The portal's timestamp shape: `YYYY-MM-DD HH:MM:SS`, UTC. */
export function toPortalTimestamp(iso: string): string;
export function toPortalTimestamp(iso: string | null): string | null;
export function toPortalTimestamp(iso: string | null): string | null {
  if (iso === null) return null;
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

/** Dates are stored as ISO 8601 text, which has four-digit years. */
const MIN_YEAR = 1;
const MAX_YEAR = 9999;

const DATE_INPUT = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * Reads a date given as `YYYY-MM-DD`, `YYYY-MM-DD HH:MM[:SS]` or ISO 8601 with an optional offset (no offset
 * means UTC) and returns it as ISO 8601 UTC; undefined when the text is not such a date, names no real day, or
 * falls outside the years 1 to 9999 in UTC.
 */
export function parseDateInput(text: string): string | undefined {
  const match = DATE_INPUT.exec(text.trim());
  if (!match) return undefined;
  const [, year, month, day, hour = '00', minute = '00', second = '00', zone] = match;
  const offset = !zone || zone.toUpperCase() === 'Z' ? 'Z' : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone;
  const date = new Date(`${year}-${month}-${day}T${hour}:${minute}:${second}${offset}`);
  if (Number.isNaN(date.getTime())) return undefined;
  // Date rolls 2026-02-30 over into March; a date that does not round-trip named no real day.
  const local = new Date(`${year}-${month}-${day}T00:00:00Z`);
  if (Number.isNaN(local.getTime()) || local.toISOString().slice(0, 10) !== `${year}-${month}-${day}`) return undefined;
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return undefined;
  // Stored as ISO text, so only four-digit years: an offset can carry 0001-01-01 or 9999-12-31 out of them
  // (toISOString would write -000001-12-31 or +010000-01-01, which sort and read wrongly).
  const utcYear = date.getUTCFullYear();
  if (utcYear < MIN_YEAR || utcYear > MAX_YEAR) return undefined;
  return date.toISOString();
}

/** A date field of a request body: null stays null, anything else must be a date (a 400 naming the field). */
export function dateField(text: string | null, path: string): string | null {
  if (text === null) return null;
  const iso = parseDateInput(text);
  if (!iso) throw invalidField(path, `must be a date from year ${MIN_YEAR} to ${MAX_YEAR} (in UTC): YYYY-MM-DD, YYYY-MM-DD HH:MM:SS or ISO 8601`);
  return iso;
}
