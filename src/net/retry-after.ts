/**
 * The wait a Retry-After header asks for, in milliseconds from `now`: delta-seconds (a fraction read too, as some
 * endpoints send one) or an HTTP date (one in the past is no wait). Undefined when the value is missing or unreadable.
 */
export function retryAfterMs(value: string | undefined, now: number): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+(?:\.\d+)?$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}
