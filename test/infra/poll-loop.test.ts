import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PollLoop } from '../../src/infra/poll-loop.js';

/** Long enough that no pass comes from the interval during a test: what runs was started or woken. */
const NEVER = 3_600_000;

/** A pass that counts its calls, can be held until released, and tells when the n-th call has started. */
class Passes {
  calls = 0;
  active = 0;
  maxActive = 0;
  /** While set, each pass waits for release(). */
  hold = false;
  /** Set: the passes called from now fail with it (a rejection; `syncThrow` makes them throw before returning a promise). */
  failure: Error | undefined;
  syncThrow = false;
  private gates: (() => void)[] = [];
  private waiters: { n: number; resolve: () => void }[] = [];

  readonly pass = (): Promise<void> => {
    this.calls += 1;
    for (const waiter of this.waiters.filter((w) => w.n <= this.calls)) waiter.resolve();
    this.waiters = this.waiters.filter((w) => w.n > this.calls);
    if (this.failure && this.syncThrow) throw this.failure;
    return this.run(this.failure);
  };

  /** `failure`: as it was when the pass was called. */
  private async run(failure: Error | undefined): Promise<void> {
    this.active += 1;
    this.maxActive = Math.max(this.maxActive, this.active);
    try {
      if (this.hold) await new Promise<void>((resolve) => this.gates.push(resolve));
      if (failure) throw failure;
    } finally {
      this.active -= 1;
    }
  }

  release(): void {
    for (const open of this.gates.splice(0)) open();
  }

  /**
   * Resolves once `n` passes have started. The loop's timer is unref'ed (it keeps no process alive), so the ref'ed
   * failsafe also keeps this test's process alive meanwhile.
   */
  async reached(n: number): Promise<void> {
    if (this.calls >= n) return;
    // A failsafe, not a measure: a loop that never gets there fails the test rather than hanging it.
    let failsafe: NodeJS.Timeout | undefined;
    try {
      await new Promise<void>((resolve, reject) => {
        this.waiters.push({ n, resolve });
        failsafe = setTimeout(() => reject(new Error(`${this.calls} passes, never ${n}`)), 10_000);
      });
    } finally {
      clearTimeout(failsafe);
    }
  }
}

/** Lets every pending callback, promise and zero-delay timer run (a few turns of the event loop). */
async function settle(turns = 5): Promise<void> {
  for (let turn = 0; turn < turns; turn += 1) await new Promise((resolve) => setTimeout(resolve, 0));
}

function loopOf(passes: Passes, intervalMs: number, errors: unknown[] = []): PollLoop {
  return new PollLoop({ pass: passes.pass, intervalMs, onError: (error) => errors.push(error) });
}

describe('PollLoop', { timeout: 20_000 }, () => {
  it('runs nothing before start; start runs a pass at once, and a second start adds none', async () => {
    const passes = new Passes();
    const loop = loopOf(passes, NEVER);
    loop.wake();
    await settle();
    assert.equal(passes.calls, 0, 'a wake before start does nothing');
    loop.start();
    assert.equal(passes.calls, 1, 'the first pass starts within start()');
    loop.start();
    await settle();
    assert.equal(passes.calls, 1, 'no pass but the first until the interval or a wake');
    await loop.stop();
  });

  it('passes again every interval after the last ended, never two at once', async () => {
    const passes = new Passes();
    const loop = loopOf(passes, 1);
    loop.start();
    await passes.reached(5);
    await loop.stop();
    assert.equal(passes.maxActive, 1);
  });

  it('a wake while idle starts a pass at once', async () => {
    const passes = new Passes();
    const loop = loopOf(passes, NEVER);
    loop.start();
    await settle();
    loop.wake();
    assert.equal(passes.calls, 2);
    await settle();
    assert.equal(passes.calls, 2);
    await loop.stop();
  });

  it('wakes during a pass make one more pass right after it, not one each', async () => {
    const passes = new Passes();
    const loop = loopOf(passes, NEVER);
    passes.hold = true;
    loop.start();
    loop.wake();
    loop.wake();
    loop.wake();
    await settle();
    assert.equal(passes.calls, 1, 'the woken pass waits for the one running');
    passes.hold = false;
    passes.release();
    await passes.reached(2);
    await settle();
    assert.equal(passes.calls, 2, 'three wakes, one pass');
    assert.equal(passes.maxActive, 1);
    await loop.stop();
  });

  it('stop waits for the pass running, which sees `stopping`; then nothing runs, a wake asked for before included', async () => {
    const passes = new Passes();
    const loop = loopOf(passes, 1);
    passes.hold = true;
    loop.start();
    loop.wake();
    assert.equal(loop.stopping, false);
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    assert.equal(loop.stopping, true, 'the pass under way can tell it should end');
    await settle();
    assert.equal(stopped, false, 'stop waits for the pass');
    passes.release();
    await stopping;
    loop.wake();
    await settle();
    assert.equal(passes.calls, 1, 'no pass after stop: not the wake asked for during the pass, not a later wake, not the interval');
  });

  it('starts again after a stop', async () => {
    const passes = new Passes();
    const loop = loopOf(passes, NEVER);
    loop.start();
    await loop.stop();
    loop.start();
    assert.equal(loop.stopping, false);
    assert.equal(passes.calls, 2);
    loop.wake();
    assert.equal(passes.calls, 2, 'the pass of the restart still runs: the wake comes after it');
    await passes.reached(3);
    await loop.stop();
  });

  it('a wake asked for before a stop is forgotten: the restart runs its own pass and no other', async () => {
    const passes = new Passes();
    const loop = loopOf(passes, NEVER);
    passes.hold = true;
    loop.start();
    loop.wake();
    const stopped = loop.stop();
    passes.hold = false;
    passes.release();
    await stopped;
    loop.start();
    await settle();
    assert.equal(passes.calls, 2, 'the first pass and the restart, not the wake from before the stop');
    await loop.stop();
  });

  it('a failed pass goes to onError and the loop goes on (a rejection or a throw)', async () => {
    for (const syncThrow of [false, true]) {
      const passes = new Passes();
      const errors: unknown[] = [];
      const loop = loopOf(passes, 1, errors);
      passes.failure = new Error('the database is away');
      passes.syncThrow = syncThrow;
      loop.start();
      await passes.reached(3);
      assert.ok(errors.length >= 2, `errors reported (${syncThrow ? 'thrown' : 'rejected'})`);
      assert.ok(errors.every((error) => error === passes.failure));
      passes.failure = undefined;
      const failed = errors.length;
      await passes.reached(passes.calls + 2);
      await loop.stop();
      assert.ok(errors.length <= failed + 1, 'passes succeed again once the failure is gone');
    }
  });

  it('a wake during a failing pass still runs the next pass at once', async () => {
    const passes = new Passes();
    const errors: unknown[] = [];
    const loop = loopOf(passes, NEVER, errors);
    passes.hold = true;
    passes.failure = new Error('refused');
    loop.start();
    loop.wake();
    passes.hold = false;
    passes.failure = undefined;
    passes.release();
    await passes.reached(2);
    await settle();
    await loop.stop();
    assert.equal(passes.calls, 2);
    assert.equal(errors.length, 1, 'the first pass failed, the woken one did not');
  });
});
