import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sanitizeArticleHtml } from '../../src/content/sanitize.js';
import { sanitizeArticlesInPool, WorkerPool, WorkerTaskError } from '../../src/workers/pool.js';

const FIXTURE = new URL('./fixtures/failing-worker.mjs', import.meta.url).href;

describe('WorkerPool', () => {
  it('sanitizes in worker threads (the TypeScript sources load there under tsx) with the same result, in order', async () => {
    const pool = new WorkerPool({ threads: 2 });
    try {
      const htmls = Array.from(
        { length: 40 },
        (_, i) => `<p onclick="x()">${i} ${'word '.repeat(i * 10_000)}<script>x()</script><a href="javascript:x()">j</a></p>`,
      );
      assert.deepEqual(await sanitizeArticlesInPool(pool, htmls), htmls.map(sanitizeArticleHtml));
    } finally {
      await pool.close();
    }
  });

  it('cleans a usual article (under 16 KiB of HTML in all) here, without a worker, and a larger one in the workers', async () => {
    // Workers that have no sanitizer: what they are asked to clean fails.
    const pool = new WorkerPool({ threads: 1, filename: FIXTURE });
    try {
      const small = ['<p onclick="x()">Hello<script>x()</script></p>', `<p>${'word '.repeat(3_000)}</p>`];
      assert.deepEqual(await sanitizeArticlesInPool(pool, small), small.map(sanitizeArticleHtml));
      await assert.rejects(sanitizeArticlesInPool(pool, [`<p>${'word '.repeat(4_000)}</p>`]), WorkerTaskError);
    } finally {
      await pool.close();
    }
  });

  it('turns a task that throws, a worker that crashes and a task that never ends into clean errors, and keeps working', async () => {
    const errors: unknown[] = [];
    const pool = new WorkerPool({ threads: 1, filename: FIXTURE, taskTimeoutMs: 1000, onError: (error) => errors.push(error) });
    try {
      assert.equal(await pool.runNamed('echo', 'one'), 'one');
      await assert.rejects(pool.runNamed('fail', null), (error) => error instanceof WorkerTaskError && /the sanitizer broke/.test(error.message));
      await assert.rejects(pool.runNamed('crash', null), (error) => error instanceof WorkerTaskError && /exited|terminat/i.test(error.message));
      await assert.rejects(pool.runNamed('hang', null), (error) => error instanceof WorkerTaskError);
      assert.equal(await pool.runNamed('echo', 'two'), 'two', 'the crashed and stopped workers were replaced');
    } finally {
      await pool.close();
    }
  });
});
