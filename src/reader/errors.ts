/** Why a response body could not be read as a feed. */
export type FeedParseErrorCode =
  /** The body is something else: an HTML page (an error or challenge page, a site's home page), or no known format. */
  | 'not_a_feed'
  /** The body claims to be a feed but is too broken to read. */
  | 'malformed';

export class FeedParseError extends Error {
  constructor(
    readonly code: FeedParseErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'FeedParseError';
  }
}
