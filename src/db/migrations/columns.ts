import type { Dialect } from '../connection.js';

/** An auto-incrementing integer primary key in either dialect (int4 on PostgreSQL, so ids read back as numbers). */
export function idColumn(dialect: Dialect): 'serial' | 'integer' {
  return dialect === 'postgres' ? 'serial' : 'integer';
}
