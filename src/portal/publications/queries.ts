import type { Kysely } from 'kysely';
import type { Database } from '../../db/types.js';

/** The ids among `ids` that are categories (or issues) of the publication: references must stay inside it. */
export async function idsInPublication(
  db: Kysely<Database>,
  table: 'categories' | 'issues',
  publicationId: number,
  ids: number[],
): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom(table).select('id').where('publication_id', '=', publicationId).where('id', 'in', ids).execute();
  return new Set(rows.map((row) => row.id));
}
