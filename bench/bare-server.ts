// The baseline: a bare Fastify server with one route returning a constant JSON object, no logging, no hooks.

import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { reportReady } from './children.js';

const app = Fastify({ logger: false });
const body = { hello: 'world' };
app.get('/', async () => body);
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT ?? 0) });

reportReady((app.server.address() as AddressInfo).port, () => app.close());
