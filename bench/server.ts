// The real Masthead server, as `masthead serve` builds it but without request logging, listening on 127.0.0.1.
// Started by bench/run.ts with DATABASE_URL, PORT (0: any free port) and LOG_LEVEL=silent.

import type { AddressInfo } from 'node:net';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openStorage } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { reportReady } from './children.js';

const config = loadConfig(process.env);
const storage = openStorage(config.databaseUrl);
await migrateToLatest(storage.db, storage.dialect);
const app = await buildApp({ config, storage, logRequests: false });
await app.listen({ host: '127.0.0.1', port: config.port });

reportReady((app.server.address() as AddressInfo).port, async () => {
  await app.close();
  await storage.close();
});
