import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

// SQLite in WAL mode copies the log back into the database file (a checkpoint) when the log passes 1,000 pages, in
// the call of whichever write crossed that line: with better-sqlite3 that is the event loop, and a 30 MB import's
// commit then holds it for ~60 ms more. The serving connection turns automatic checkpoints off, and this thread
// checkpoints on a connection of its own instead, off the event loop. PASSIVE never waits for readers or writers.

const CHECKPOINT_EVERY_MS = 1_000;

// A plain CommonJS script (eval), so that it runs the same from the sources (tsx) and from dist/.
const CHECKPOINTER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const database = new SQLite(workerData.path);
database.pragma('busy_timeout = 5000');
const checkpoint = (mode) => {
  try {
    database.pragma('wal_checkpoint(' + mode + ')');
  } catch {
    // Busy or locked: the next round tries again.
  }
};
const timer = setInterval(() => checkpoint('PASSIVE'), workerData.everyMs);
parentPort.on('message', () => {
  clearInterval(timer);
  checkpoint('PASSIVE');
  database.close();
  parentPort.close();
});
`;

export interface Checkpointer {
  /** One last checkpoint, then the thread ends. */
  stop(): Promise<void>;
}

export function startCheckpointer(path: string): Checkpointer {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(CHECKPOINTER_SOURCE, { eval: true, workerData: { path, driver, everyMs: CHECKPOINT_EVERY_MS } });
  // The thread never keeps the process alive on its own, and its failure costs only the checkpoints (SQLite then
  // checkpoints when the last connection closes).
  worker.unref();
  worker.on('error', () => undefined);
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    async stop() {
      // Kept alive until its last checkpoint is done.
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}
