import type { Kysely } from 'kysely';
import type { FeedSettings } from '../../config.js';
import type { Dialect } from '../../db/connection.js';
import type { Database } from '../../db/types.js';
import type { PublicationService } from '../publications/service.js';
import { FeedRunner } from './runner.js';
import { FeedScheduler, type SchedulerLogger } from './scheduler.js';
import { FeedService } from './service.js';
import { type FeedReader, inlineFeedReader } from './reader.js';
import type { FeedFetch, FeedSource } from './sync.js';

export interface Feeds {
  service: FeedService;
  scheduler: FeedScheduler;
  /** Starts the background synchronization when FEED_SCHEDULER is on. */
  start(): void;
  /** Stops it, letting the runs in progress finish. */
  stop(): Promise<void>;
}

/** The feed service and its scheduler, sharing one runner (the manual and the scheduled synchronize are the same). */
export function buildFeeds(deps: {
  db: Kysely<Database>;
  dialect: Dialect;
  publications: PublicationService;
  fetch: FeedFetch;
  /** How fetched feeds are read and their entries cleaned: in the app's worker threads (inline by default). */
  reader?: FeedReader;
  settings: FeedSettings;
  log?: SchedulerLogger;
}): Feeds {
  const source: FeedSource = { fetch: deps.fetch, reader: deps.reader ?? inlineFeedReader };
  const runner = new FeedRunner(deps.db, source, { intervalMinutes: deps.settings.syncIntervalMinutes });
  const scheduler = new FeedScheduler(deps.db, deps.dialect, runner, deps.log ? { logger: deps.log } : {});
  const service = new FeedService(deps.db, deps.publications, source, runner, () => scheduler.wake());
  return {
    service,
    scheduler,
    start: () => {
      if (deps.settings.scheduler) scheduler.start();
    },
    stop: () => scheduler.stop(),
  };
}
