import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { Dialect } from '../../src/db/connection.js';
import { openStorage } from '../../src/db/connection.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createTestDatabase } from '../helpers/app.js';

/**
 * The real app on a database of its own, with routes of the test's added before it is ready (a handler that fails
 * or takes its time), for behaviour that no route of the app shows on demand.
 */
export async function startAppWithRoutes(dialect: Dialect, env: Record<string, string>, addRoutes: (app: FastifyInstance) => void) {
  const database = await createTestDatabase(dialect);
  const config = loadConfig({ FEED_SCHEDULER: 'off', LEAD_WORKER: 'off', ...env, DATABASE_URL: database.url, LOG_LEVEL: 'silent' });
  const storage = openStorage(config.databaseUrl);
  try {
    await migrateToLatest(storage.db, storage.dialect);
    const app = await buildApp({ config, storage, logRequests: false });
    addRoutes(app);
    await app.ready();
    return {
      app,
      async close() {
        await app.close();
        await storage.close();
        await database.drop();
      },
    };
  } catch (error) {
    await storage.close();
    await database.drop();
    throw error;
  }
}
