// Starting and stopping the benchmark's server processes. Each server runs in a child process of its own, so that
// autocannon (in the parent) never competes with it for one event loop. A child reports its port over the IPC
// channel once it listens, and exits by itself if the parent goes away.

import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface Server {
  label: string;
  port: number;
  child: ChildProcess;
}

interface ReadyMessage {
  type: 'ready';
  port: number;
}

const running = new Set<ChildProcess>();

/** Last resort: whatever way the parent ends, no server is left behind. */
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Starts `node [nodeArgs] --import tsx <script>` with the given environment and resolves once it listens.
 * BENCH_NODE_ARGS (space-separated) adds node flags to every server, e.g. `--cpu-prof --cpu-prof-dir=.bench/prof`.
 */
export function startServer(label: string, script: string, env: Record<string, string>, timeoutMs = 30_000): Promise<Server> {
  const extraArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
  const child = spawn(process.execPath, [...extraArgs, '--import', 'tsx', script], {
    cwd: ROOT,
    env: { ...process.env, ...env, NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`${label}: not listening after ${timeoutMs / 1000} s`)), timeoutMs);
    function fail(error: Error) {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    }
    child.once('error', (error) => fail(new Error(`${label}: could not start: ${error.message}`)));
    child.once('exit', (code, signal) => fail(new Error(`${label}: exited before listening (code ${code}, signal ${signal})`)));
    child.on('message', (message: ReadyMessage) => {
      if (message?.type !== 'ready') return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.once('exit', () => running.delete(child));
      resolve({ label, port: message.port, child });
    });
  });
}

/** SIGTERM (so a profiling child can write its profile), SIGKILL if it has not exited after `graceMs`. */
export async function stopServer(server: Server, graceMs = 5_000): Promise<void> {
  const { child } = server;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const killed = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      child.kill('SIGKILL');
      setTimeout(resolve, 1_000);
    }, graceMs);
  });
  await Promise.race([exited, killed]);
  clearTimeout(timer);
}

export function killAll(): void {
  for (const child of running) child.kill('SIGKILL');
}

/** For the children: tell the parent the port, and exit when the parent disconnects or asks to stop. */
export function reportReady(port: number, close: () => Promise<void>): void {
  let closing = false;
  const stop = () => {
    if (closing) return;
    closing = true;
    close()
      .catch(() => undefined)
      .finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  process.on('disconnect', stop);
  if (!process.send) throw new Error('start this through bench/run.ts (it needs the IPC channel)');
  process.send({ type: 'ready', port } satisfies ReadyMessage);
}

/**
 * The histogram of a server's own event-loop delay (bench/server.ts with BENCH_EVENT_LOOP_DELAY=1), in ms. Each value
 * is the interval between two ticks of a `resolutionMs` timer, so an idle loop reads about `resolutionMs`.
 */
export interface EventLoopDelayReading {
  resolutionMs: number;
  count: number;
  maxMs: number;
  p99Ms: number;
  meanMs: number;
}

let nextQuestion = 0;

/** Sends {type, id} to a server over IPC and resolves with its answer carrying the same id. */
export function askServer<T>(server: Server, type: string, timeoutMs = 60_000): Promise<T> {
  const { child } = server;
  const id = ++nextQuestion;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`${server.label}: no answer to ${type} within ${timeoutMs / 1000} s`)), timeoutMs);
    const onMessage = (message: { id?: number }) => {
      if (message?.id === id) done(undefined, message as T);
    };
    const onExit = () => done(new Error(`${server.label}: exited before answering ${type}`));
    function done(error: Error | undefined, answer?: T) {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve(answer!);
    }
    child.on('message', onMessage);
    child.once('exit', onExit);
    child.send({ type, id });
  });
}
