// Which database errors mean "the database cannot be reached just now" (a dropped connection, a restart, a
// failover, a full pool) rather than "this request is wrong" or "our code is wrong". Those are answered 503 with
// Retry-After: retrying the same request shortly is the right move for the client, and nothing is half-written
// (a statement or transaction cut off by a dropped connection is rolled back by the server).

/** SQLSTATE classes and codes of PostgreSQL that say the server is going away, starting, or out of connections. */
const UNAVAILABLE_SQLSTATES = new Set([
  '57P01', // admin_shutdown: pg_terminate_backend, a fast shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up, in recovery
  '57P05', // idle_session_timeout
  '57014', // query_canceled: DATABASE_STATEMENT_TIMEOUT_MS passed (the server is too busy, or the statement too big for now)
  '53300', // too_many_connections
  '25006', // read_only_sql_transaction: a standby after a failover, until the new primary is found
]);

/** Socket errors: the server refused, reset or timed out the connection. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** SQLite's "another connection holds the lock" after busy_timeout: retryable too. */
const SQLITE_BUSY = /^SQLITE_BUSY/;

// pg and pg-pool report a lost connection with these messages and no code.
const PG_CONNECTION_MESSAGES = [
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'timeout exceeded when trying to connect',
  'Client was closed and is not queryable',
];

export function isDatabaseUnavailable(error: unknown): boolean {
  if (!error || typeof error !== 'object') return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (UNAVAILABLE_SQLSTATES.has(code) || code.startsWith('08') || NETWORK_CODES.has(code) || SQLITE_BUSY.test(code)) return true;
  }
  if (typeof message === 'string' && PG_CONNECTION_MESSAGES.some((known) => message.startsWith(known))) return true;
  // pg-pool wraps a failed connect's cause; Node wraps several in an AggregateError (ECONNREFUSED on ::1 and 127.0.0.1).
  const { cause, errors } = error as { cause?: unknown; errors?: unknown };
  if (cause !== undefined && cause !== error && isDatabaseUnavailable(cause)) return true;
  return Array.isArray(errors) && errors.some((inner) => isDatabaseUnavailable(inner));
}
