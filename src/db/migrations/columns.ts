import type { ColumnDefinitionBuilder } from 'kysely';
import type { Dialect } from '../connection.js';

/**
 * The id column's type as migrations 001–005 made it (int4 `serial` on PostgreSQL, so ids read back as numbers; a
 * plain `integer primary key` on SQLite). Kept for those migrations, which are history: on SQLite such a column hands
 * a deleted row's id to the next new row, so 009 rebuilt their tables. A new table uses `primaryId` instead.
 */
export function idColumn(dialect: Dialect): 'serial' | 'integer' {
  return dialect === 'postgres' ? 'serial' : 'integer';
}

/**
 * An auto-incrementing integer primary key whose ids are never used twice, on either database:
 * `.addColumn('id', ...primaryId(dialect))`. PostgreSQL's `serial` sequence never hands out a number twice (int4, so
 * ids read back as numbers); on SQLite, AUTOINCREMENT keeps the largest id ever given in `sqlite_sequence`, where a
 * plain `integer primary key` would give the largest id again once its row is deleted.
 */
export function primaryId(dialect: Dialect): ['serial' | 'integer', (column: ColumnDefinitionBuilder) => ColumnDefinitionBuilder] {
  return dialect === 'postgres' ? ['serial', (column) => column.primaryKey()] : ['integer', (column) => column.primaryKey().autoIncrement()];
}
