// On a SQLite file, the serving connection never checkpoints the write-ahead log itself (a large commit would pay
// for it on the event loop): a thread of the storage's own does it, on its own connection.

import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { openStorage } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createOwner, createPublication } from '../helpers/app.js';

describe('SQLite write-ahead log checkpoints', () => {
  it('are taken off the serving connection: the log reaches the database file without a write paying for it', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'masthead-checkpoint-'));
    const path = join(folder, 'masthead.sqlite');
    const storage = openStorage(path);
    try {
      await migrateToLatest(storage.db, storage.dialect);
      const { rows } = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(storage.db);
      assert.equal(rows[0]!.wal_autocheckpoint, 0, 'the serving connection never checkpoints');

      const owner = await createOwner(storage);
      const publication = await createPublication(storage, owner.accountId);
      const before = (await stat(path)).size;
      // About 8 MB of articles: several times the 1,000 pages at which a connection would checkpoint by itself.
      const html = `<p>${'x'.repeat(100_000)}</p>`;
      for (let index = 0; index < 80; index += 1) {
        await storage.db
          .insertInto('articles')
          .values({
            publication_id: publication.id,
            title: `Article ${index}`,
            html,
            unlock_type: 'free',
            visible: 1,
            created_at: '2026-01-01T00:00:00Z',
            updated_at: '2026-01-01T00:00:00Z',
          } as never)
          .execute();
      }
      assert.ok((await stat(`${path}-wal`)).size > 4_000_000, 'the writes went to the log');
      // The checkpointer's thread copies the log into the database file within a few of its rounds.
      const deadline = Date.now() + 20_000;
      while ((await stat(path)).size < before + 4_000_000) {
        assert.ok(Date.now() < deadline, 'the log was copied into the database file by the checkpointer');
        await sleep(100);
      }
    } finally {
      await storage.close();
      await rm(folder, { recursive: true, force: true });
    }
  });
});
