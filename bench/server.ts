// The real Masthead server, as `masthead serve` builds it but without request logging, listening on 127.0.0.1.
// Started by bench/run.ts with DATABASE_URL, PORT (0: any free port) and LOG_LEVEL=silent.
//
// With BENCH_EVENT_LOOP_DELAY=1 (bench/event-loop.ts) it also measures its own event loop's delay
// (perf_hooks.monitorEventLoopDelay, 10 ms resolution) and answers the parent over the IPC channel, never over
// HTTP: {type: 'eld-reset', id} clears the histogram, {type: 'eld-read', id} returns it (EventLoopDelayReading).

import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openStorage } from '../src/db/connection.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { type EventLoopDelayReading, reportReady } from './children.js';

if (process.env.BENCH_EVENT_LOOP_DELAY === '1') {
  const resolutionMs = 10;
  const histogram = monitorEventLoopDelay({ resolution: resolutionMs });
  histogram.enable();
  process.on('message', (message: { type?: string; id?: number }) => {
    if (message?.type === 'eld-reset') {
      histogram.reset();
      process.send?.({ type: 'eld-reset', id: message.id });
    } else if (message?.type === 'eld-read') {
      const ms = (ns: number) => ns / 1e6;
      const reading: EventLoopDelayReading = {
        resolutionMs,
        count: histogram.count,
        maxMs: ms(histogram.max),
        p99Ms: ms(histogram.percentile(99)),
        meanMs: ms(histogram.mean),
      };
      process.send?.({ type: 'eld', id: message.id, reading });
    }
  });
}

const config = loadConfig(process.env);
const storage = openStorage(config.databaseUrl);
await migrateToLatest(storage.db, storage.dialect);
const app = await buildApp({ config, storage, logRequests: false });
await app.listen({ host: '127.0.0.1', port: config.port });

reportReady((app.server.address() as AddressInfo).port, async () => {
  await app.close();
  await storage.close();
});
