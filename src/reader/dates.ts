// Feed dates as ISO 8601 UTC: RFC 822/2822 (named and numeric zones), ISO 8601 / RFC 3339, and the malformed forms
// found in the wild: no day name, two-digit years, single-digit days and hours, lower-case month names, extra
// spaces and commas, a date and time without a zone (taken as UTC). Anything else is undefined, never a guess.

const MONTHS: Readonly<Record<string, number>> = {
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  may: 5,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  oct: 10,
  nov: 11,
  dec: 12,
};

// Offsets in minutes east of UTC.
const ZONES: Readonly<Record<string, number>> = {
  ut: 0,
  utc: 0,
  gmt: 0,
  z: 0,
  wet: 0,
  est: -300,
  edt: -240,
  cst: -360,
  cdt: -300,
  mst: -420,
  mdt: -360,
  pst: -480,
  pdt: -420,
  akst: -540,
  akdt: -480,
  hst: -600,
  ast: -240,
  adt: -180,
  nst: -210,
  ndt: -150,
  bst: 60,
  ist: 330,
  cet: 60,
  cest: 120,
  met: 60,
  mest: 120,
  eet: 120,
  eest: 180,
  msk: 180,
  jst: 540,
  kst: 540,
  hkt: 480,
  sgt: 480,
  awst: 480,
  acst: 570,
  aest: 600,
  aedt: 660,
  nzst: 720,
  nzdt: 780,
};

function zoneOffset(zone: string | undefined): number | undefined {
  if (!zone) return 0;
  const numeric = /^(?:(?:gmt|utc))?([+-])(\d{1,2}):?(\d{2})?$/i.exec(zone);
  if (numeric) {
    const minutes = Number(numeric[2]) * 60 + Number(numeric[3] ?? 0);
    return minutes > 18 * 60 ? undefined : numeric[1] === '-' ? -minutes : minutes;
  }
  return ZONES[zone.toLowerCase()];
}

function fullYear(year: string): number {
  const value = Number(year);
  if (year.length === 4) return value;
  if (year.length === 2) return value < 50 ? 2000 + value : 1900 + value; // RFC 2822 §4.3
  return Number.NaN;
}

interface Parts {
  year: number;
  month: number;
  day: number;
  hour?: string;
  minute?: string;
  second?: string;
  fraction?: string;
  zone?: string;
}

function toIso({ year, month, day, hour = '0', minute = '0', second = '0', fraction, zone }: Parts): string | undefined {
  const offset = zoneOffset(zone);
  if (offset === undefined) return undefined;
  const [h, m, s] = [Number(hour), Number(minute), Math.min(Number(second), 59)]; // a leap second reads as :59
  if (!(year >= 1000 && year <= 9999) || month < 1 || month > 12 || h > 24 || m > 59) return undefined;
  if (day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return undefined;
  const ms = fraction ? Math.round(Number(`0.${fraction}`) * 1000) : 0;
  const time = Date.UTC(year, month - 1, day, h, m, s, ms) - offset * 60_000;
  const iso = Number.isFinite(time) ? new Date(time).toISOString() : undefined;
  // Four-digit years in UTC only: an offset can carry 9999-12-31 into `+010000-...`, which sorts wrongly as text
  // (SQLite) and is no timestamp PostgreSQL reads.
  return iso?.length === 24 ? iso : undefined;
}

const TIME = String.raw`(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?`;
const ZONE = String.raw`((?:gmt|utc)?[+-]\d{1,2}:?\d{2}|(?:gmt|utc)[+-]\d{1,2}|[a-z]{1,5})`;

// [day-name,] D month YY[YY] [time] [zone]
const RFC822 = new RegExp(
  String.raw`^(?:[a-z]+\.?(?:,\s*|\s+))?(\d{1,2})[\s-]+([a-z]{3,9})\.?,?[\s-]+(\d{2,4}),?(?:\s+${TIME})?(?:\s*${ZONE})?$`,
  'i',
);
// [day-name,] month D[,] YYYY [time] [zone]
const MONTH_FIRST = new RegExp(
  String.raw`^(?:[a-z]+\.?(?:,\s*|\s+))?([a-z]{3,9})\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4}),?(?:\s+${TIME})?(?:\s*${ZONE})?$`,
  'i',
);
// YYYY-MM-DD[(T| )hh:mm[:ss[.fff]]][zone], also the basic form YYYYMMDDThhmmss
const ISO8601 = new RegExp(
  String.raw`^(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?|(\d{2})(\d{2}))(?:(?:t|\s+)(\d{1,2}):?(\d{2})(?::?(\d{2})(?:[.,](\d+))?)?)?\s*(z|[+-]\d{2}(?::?\d{2})?|utc|gmt)?$`,
  'i',
);

function monthNumber(name: string): number | undefined {
  return MONTHS[name.slice(0, 3).toLowerCase()];
}

export function parseFeedDate(text: string | undefined | null): string | undefined {
  if (!text) return undefined;
  const value = text.trim().replace(/\s+/g, ' ');
  if (!value) return undefined;

  const iso = ISO8601.exec(value);
  if (iso) {
    const [, year, month, day, basicMonth, basicDay, hour, minute, second, fraction, zone] = iso;
    return toIso({
      year: Number(year),
      month: Number(month ?? basicMonth ?? 1),
      day: Number(day ?? basicDay ?? 1),
      hour,
      minute,
      second,
      fraction,
      zone,
    });
  }
  const rfc = RFC822.exec(value);
  if (rfc) {
    const [, day, monthName, year, hour, minute, second, fraction, zone] = rfc;
    const month = monthNumber(monthName!);
    if (month === undefined) return undefined;
    return toIso({ year: fullYear(year!), month, day: Number(day), hour, minute, second, fraction, zone });
  }
  const us = MONTH_FIRST.exec(value);
  if (us) {
    const [, monthName, day, year, hour, minute, second, fraction, zone] = us;
    const month = monthNumber(monthName!);
    if (month === undefined) return undefined;
    return toIso({ year: Number(year), month, day: Number(day), hour, minute, second, fraction, zone });
  }
  return undefined;
}
