import { type CsvTableLimits, type CsvTableOutcome, readCsvTable } from '../content/csv-table.js';
import { sanitizeArticleHtml } from '../content/sanitize.js';
import { availableParallelism } from 'node:os';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type * as Tasks from './tasks.js';

// CPU-heavy work on user-sized input (sanitizing article HTML, reading feeds, parsing large JSON bodies) runs in
// worker threads, so that one request never holds the event loop that every other request is waiting on.
//
// The worker entry is this folder's tasks module with the same extension as this module: `.js` in the compiled
// dist/, `.ts` when the sources run under tsx (tests, `npm run dev`).

const EXTENSION = extname(fileURLToPath(import.meta.url));
const TASKS_URL = new URL(`./tasks${EXTENSION}`, import.meta.url);

/**
 * Under tsx, worker threads must read TypeScript too. On Node 20 the `--import tsx` they inherit registers nothing
 * outside the main thread, so each worker registers tsx's hooks itself before loading the tasks.
 */
function workerExecArgv(): string[] | undefined {
  if (EXTENSION !== '.ts') return undefined;
  const tsx = import.meta.resolve('tsx/esm/api');
  return ['--import', `data:text/javascript,import{register}from${JSON.stringify(tsx)};register()`];
}

/** One worker per core but one, which the event loop keeps: at least one. */
export function defaultWorkerThreads(): number {
  return Math.max(1, availableParallelism() - 1);
}

/** A task that failed in its worker (an exception, a crash, a timeout): a clean error, never a hung request. */
export class WorkerTaskError extends Error {
  constructor(task: string, cause: unknown) {
    super(`the ${task} task failed in its worker thread: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'WorkerTaskError';
  }
}

export interface WorkerPoolOptions {
  /** Worker threads at most; defaultWorkerThreads() when unset. */
  threads?: number;
  /** A task still running after this long is stopped (its worker is replaced) and fails. */
  taskTimeoutMs?: number;
  /** The worker entry (tests use their own); this folder's tasks module by default. */
  filename?: string;
  /** Where a worker's failure outside any task is reported (the pool replaces the worker). */
  onError?: (error: unknown) => void;
}

type TaskName = keyof typeof Tasks;
type TaskInput<N extends TaskName> = Parameters<(typeof Tasks)[N]>[0];
type TaskOutput<N extends TaskName> = Awaited<ReturnType<(typeof Tasks)[N]>>;

/** The worker threads, made once by the composition root and closed with the app. */
export class WorkerPool {
  private readonly piscina: Piscina;
  private readonly taskTimeoutMs: number;
  readonly threads: number;

  constructor(options: WorkerPoolOptions = {}) {
    this.threads = options.threads ?? defaultWorkerThreads();
    this.taskTimeoutMs = options.taskTimeoutMs ?? 120_000;
    const execArgv = workerExecArgv();
    this.piscina = new Piscina({
      filename: options.filename ?? TASKS_URL.href,
      // Started when first needed (an app that never imports starts none), kept a while once started.
      minThreads: 0,
      maxThreads: this.threads,
      idleTimeout: 60_000,
      ...(execArgv ? { execArgv } : {}),
    });
    // A worker that fails with no task running would otherwise be an unhandled 'error' event: the process's end.
    this.piscina.on('error', options.onError ?? (() => undefined));
  }

  /**
   * Runs one task of tasks.ts in a worker. `transfer` names the memory moved to the worker rather than copied (the
   * caller must not touch it afterwards): copying a 30 MB body alone holds the event loop ~40 ms.
   */
  async run<N extends TaskName>(name: N, input: TaskInput<N>, transfer: ArrayBuffer[] = []): Promise<TaskOutput<N>> {
    return this.runNamed(name, input, transfer) as Promise<TaskOutput<N>>;
  }

  /**
   * Runs one task per input, at most `threads` of them at a time, results in order: one large job (a feed's entries,
   * a big import) never fills the queue ahead of the small tasks of other requests.
   */
  async runEach<N extends TaskName>(name: N, inputs: TaskInput<N>[]): Promise<TaskOutput<N>[]> {
    const results: TaskOutput<N>[] = new Array(inputs.length);
    let next = 0;
    const lane = async () => {
      while (next < inputs.length) {
        const index = next++;
        results[index] = await this.run(name, inputs[index]!);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.threads, inputs.length) }, lane));
    return results;
  }

  /** Runs any exported function of the worker entry (tests run their own entry's). */
  async runNamed(name: string, input: unknown, transfer: ArrayBuffer[] = []): Promise<unknown> {
    try {
      return await this.piscina.run(input, { name, signal: AbortSignal.timeout(this.taskTimeoutMs), transferList: transfer });
    } catch (error) {
      throw new WorkerTaskError(name, error);
    }
  }

  /** Stops the workers; tasks still queued fail. */
  async close(): Promise<void> {
    await this.piscina.destroy();
  }
}

/** About this much HTML per sanitizing task: a large import is spread over the workers, and no message is huge. */
const SANITIZE_CHUNK_CHARS = 1024 * 1024;

/**
 * Below this much HTML in all, cleaning it here (about 75 µs a KiB) costs less than a worker's round trip, and far
 * less than the 100 ms the event loop may be held: a usual article's create or update is cleaned inline.
 */
const INLINE_SANITIZE_CHARS = 16 * 1024;

/** Cleans article HTML (sanitizeArticleHtml) in the pool, in tasks of about 1 MiB, keeping the order. */
export async function sanitizeArticlesInPool(pool: WorkerPool, htmls: string[]): Promise<string[]> {
  if (htmls.reduce((sum, html) => sum + html.length, 0) < INLINE_SANITIZE_CHARS) return htmls.map(sanitizeArticleHtml);
  const chunks: string[][] = [];
  let chunk: string[] = [];
  let size = 0;
  for (const html of htmls) {
    chunk.push(html);
    size += html.length;
    if (size >= SANITIZE_CHUNK_CHARS) {
      chunks.push(chunk);
      chunk = [];
      size = 0;
    }
  }
  if (chunk.length > 0) chunks.push(chunk);
  return (await pool.runEach('sanitizeArticles', chunks)).flat();
}

/** Below this size a CSV file is read here (well under a millisecond a KiB); a larger one in a worker thread. */
const INLINE_CSV_BYTES = 64 * 1024;

/** Reads an uploaded CSV file (csv-table.ts), in the pool when it is large: 2 MB take ~150 ms to parse. */
export async function readCsvInPool(pool: WorkerPool, bytes: Buffer, limits: CsvTableLimits): Promise<CsvTableOutcome> {
  if (bytes.length < INLINE_CSV_BYTES) return readCsvTable(bytes, limits);
  return pool.run('readCsv', { bytes, limits });
}

/**
 * The memory of these bytes, when they alone hold it (a large Buffer has an ArrayBuffer of its own; a small one is a
 * slice of Node's shared pool, which must never be moved): what run() may transfer instead of copying.
 */
export function ownMemory(bytes: Uint8Array): ArrayBuffer[] {
  const memory = bytes.buffer;
  return memory instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === memory.byteLength ? [memory] : [];
}
