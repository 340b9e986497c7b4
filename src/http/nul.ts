/** The message of a NUL character anywhere in the input (JSON bodies, query strings, dashboard forms). */
export const NUL_MESSAGE = 'must not contain the NUL character (\\u0000)';

/** The JSON pointer of the first string (value or key) holding a NUL character, if any. */
export function pathOfNul(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.includes('\0') ? path : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, child] of Object.entries(value)) {
    const childPath = `${path}/${key}`;
    if (key.includes('\0')) return childPath;
    const found = pathOfNul(child, childPath);
    if (found !== undefined) return found;
  }
  return undefined;
}
