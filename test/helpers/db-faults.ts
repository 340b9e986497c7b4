// Database faults caused for real in tests: PostgreSQL terminating the service's connections, and a TCP proxy in
// front of PostgreSQL that cuts, refuses or stalls them.

import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { POSTGRES_URL } from './app.js';

/**
 * Terminates (pg_terminate_backend, as a restart or a failover does) every backend whose application_name is
 * `applicationName`, so that only the connections of the app under test are hit; returns how many there were.
 */
export async function terminateBackends(applicationName: string): Promise<number> {
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  try {
    // With a timeout, pg_terminate_backend returns once each backend has exited (PostgreSQL 14+), not when it was only
    // signalled: on a busy machine a signalled backend can still answer the next query, and the test would race it.
    const result = await admin.query(
      'select pg_terminate_backend(pid, 10000) as done from pg_stat_activity where application_name = $1 and pid <> pg_backend_pid()',
      [applicationName],
    );
    return result.rows.filter((row) => row.done).length;
  } finally {
    await admin.end();
  }
}

/**
 * A TCP proxy on 127.0.0.1 in front of a real server (PostgreSQL), to cause the faults a network causes: every
 * connection cut at once (a failover, a proxy reaping connections), the server gone (connections refused), or a
 * server that accepts connections and never answers.
 */
export interface TcpProxy {
  port: number;
  /** Closes every open connection, both ways, without a word to either side. */
  cutAll(): void;
  /** Stops listening and cuts every connection: new connections are refused until up(). */
  down(): Promise<void>;
  /** Accepts connections again, on the same port. */
  up(): Promise<void>;
  /** While on, new connections are accepted and never forwarded (nothing is ever answered). */
  stall(on: boolean): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let stalled = false;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const onConnection = (client: Socket) => {
    track(client);
    if (stalled) return;
    const upstream = createConnection(target);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  };
  let server: Server = createServer(onConnection);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const cutAll = () => {
    for (const socket of sockets) socket.destroy();
  };
  const down = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    cutAll();
    await closed;
  };
  return {
    port,
    cutAll,
    down,
    async up() {
      server = createServer(onConnection);
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    },
    stall(on) {
      stalled = on;
    },
    async close() {
      if (server.listening) await down();
      cutAll();
    },
  };
}
