import { type RawBuilder, type SqlBool, sql } from 'kysely';
import type { Dialect } from './connection.js';

// Raw SQL that names a timestamp or a flag column the same way on both databases. PostgreSQL keeps them as timestamptz
// and boolean (migration 015), SQLite as ISO 8601 text and 0/1. Parameters need nothing: PostgreSQL reads an ISO
// string or '1'/'0' as the column's type wherever the parameter's type follows from the column (a comparison, an
// assignment). Only these two cases do not.

/** A timestamp parameter where nothing around it gives its type (a SELECT feeding an INSERT, a UNION). */
export function timestampValue(dialect: Dialect, iso: string): RawBuilder<string> {
  return dialect === 'postgres' ? sql<string>`cast(${iso} as timestamptz)` : sql<string>`cast(${iso} as text)`;
}

/**
 * The flag column is set: `column` on PostgreSQL (a boolean), `column = 1` on SQLite. Written out, not as a parameter,
 * so that both planners match it with the partial indexes whose predicate is the flag (`where run_async`).
 */
export function flagSet(dialect: Dialect, column: string): RawBuilder<SqlBool> {
  return dialect === 'postgres' ? sql<SqlBool>`${sql.ref(column)}` : sql<SqlBool>`${sql.ref(column)} = 1`;
}
