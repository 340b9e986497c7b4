// When a feed is synchronized next: the configured interval, sooner for feeds that post often, never sooner than
// the feed's own freshness hints (RSS <ttl>, Cache-Control max-age, Expires) allow, exponentially later after
// failures, and never before a Retry-After.

import { retryAfterMs } from '../../net/retry-after.js';
import type { NormalizedEntry } from '../../reader/index.js';

export interface ScheduleSettings {
  /** The regular interval between synchronizations of a feed (FEED_SYNC_INTERVAL_MINUTES). */
  intervalMinutes: number;
}

/** However often a feed posts, it is not fetched more often than this (unless the configured interval is shorter). */
export const MIN_INTERVAL_MINUTES = 5;
/** A feed's own TTL or cache lifetime is honoured up to a day: a feed saying "a year" still updates daily. */
export const MAX_FRESHNESS_MINUTES = 24 * 60;
/** Back-off after failures doubles up to a day (or the configured interval, if longer). */
export const MAX_BACKOFF_MINUTES = 24 * 60;
/** A Retry-After of more than a week is read as a week. */
export const MAX_RETRY_AFTER_SECONDS = 7 * 24 * 60 * 60;
/** After this many failures in a row, a feed is set inactive. */
export const DEACTIVATE_AFTER_FAILURES = 10;

const MINUTE = 60_000;
const WEEK_MINUTES = 7 * 24 * 60;

/**
 * The interval a feed's posting rate suggests: a week divided by the entries published in the last week, within
 * [MIN_INTERVAL_MINUTES, the configured interval]. Undefined when nothing was published in the last week.
 */
export function postingIntervalMinutes(entries: readonly NormalizedEntry[], now: Date, settings: ScheduleSettings): number | undefined {
  const weekAgo = now.getTime() - WEEK_MINUTES * MINUTE;
  let recent = 0;
  for (const entry of entries) {
    const published = entry.publishedAt ? Date.parse(entry.publishedAt) : Number.NaN;
    if (published >= weekAgo && published <= now.getTime() + MINUTE) recent += 1;
  }
  if (recent === 0) return undefined;
  return clamp(Math.round(WEEK_MINUTES / recent), Math.min(MIN_INTERVAL_MINUTES, settings.intervalMinutes), settings.intervalMinutes);
}

/** The interval a parsed feed asks for: its posting rate, raised to its own <ttl> (capped at a day). */
export function contentIntervalMinutes(
  entries: readonly NormalizedEntry[],
  ttlMinutes: number | undefined,
  now: Date,
  settings: ScheduleSettings,
): number {
  const posting = postingIntervalMinutes(entries, now, settings) ?? settings.intervalMinutes;
  return Math.max(posting, Math.min(ttlMinutes ?? 0, MAX_FRESHNESS_MINUTES));
}

/**
 * How long the response says it stays fresh, in minutes (capped at a day): Cache-Control max-age (unless no-cache
 * or no-store), else Expires relative to the response's Date. Undefined without a usable header.
 */
export function freshnessMinutes(headers: Readonly<Record<string, string>>, now: Date): number | undefined {
  const cacheControl = (headers['cache-control'] ?? '').toLowerCase();
  let seconds: number | undefined;
  if (/(?:^|,)\s*(?:no-cache|no-store)\b/.test(cacheControl)) return undefined;
  const maxAge = /(?:^|,)\s*max-age\s*=\s*"?(\d{1,10})"?/.exec(cacheControl);
  if (maxAge) seconds = Number(maxAge[1]);
  else if (headers.expires) {
    const expires = Date.parse(headers.expires);
    const date = headers.date ? Date.parse(headers.date) : Number.NaN;
    if (Number.isFinite(expires)) seconds = (expires - (Number.isFinite(date) ? date : now.getTime())) / 1000;
  }
  if (seconds === undefined || !(seconds > 0)) return undefined;
  return Math.min(Math.ceil(seconds / 60), MAX_FRESHNESS_MINUTES);
}

/** When to synchronize next after a successful run: the content's interval, no sooner than the response allows. */
export function nextSyncAfterSuccess(now: Date, contentMinutes: number, responseFreshnessMinutes: number | undefined): Date {
  return new Date(now.getTime() + Math.max(contentMinutes, responseFreshnessMinutes ?? 0) * MINUTE);
}

/** The wait after the `failures`-th failure in a row: the interval, doubled each time, up to a day (or the interval). */
export function backoffMinutes(failures: number, settings: ScheduleSettings): number {
  const cap = Math.max(MAX_BACKOFF_MINUTES, settings.intervalMinutes);
  return Math.min(settings.intervalMinutes * 2 ** Math.min(Math.max(failures - 1, 0), 30), cap);
}

/** When to try again after a failure: the back-off, and not before a Retry-After. */
export function nextSyncAfterFailure(now: Date, failures: number, settings: ScheduleSettings, retryNotBefore: Date | undefined): Date {
  const backoff = now.getTime() + backoffMinutes(failures, settings) * MINUTE;
  return new Date(Math.max(backoff, retryNotBefore?.getTime() ?? 0));
}

/** A Retry-After header (delta-seconds or an HTTP date) as seconds from now, at most a week; undefined if unreadable. */
export function retryAfterSeconds(value: string | undefined, now: Date): number | undefined {
  const ms = retryAfterMs(value, now.getTime());
  return ms === undefined ? undefined : clamp(Math.ceil(ms / 1000), 0, MAX_RETRY_AFTER_SECONDS);
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(Math.max(value, min), max);
}
