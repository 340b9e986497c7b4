import { randomUUID } from 'node:crypto';
import { type IncomingMessage, maxHeaderSize, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Static } from '@sinclair/typebox';
import type { FastifyHttpOptions, FastifyInstance } from 'fastify';
import type { HttpSettings } from '../config.js';
import type { ErrorCode } from '../errors.js';
import { type ErrorBody, errorBody } from './errors.js';

/**
 * The server's side of the connection: how long it waits for clients, request ids, and the answer to requests that
 * Node refuses before Fastify sees them. Spread into Fastify's options by buildApp.
 */
export function serverOptions(settings: HttpSettings) {
  const headersTimeout = settings.headersTimeoutSeconds * 1000;
  const requestTimeout = settings.requestTimeoutSeconds * 1000;
  return {
    // Node checks the headers and request timeouts every connectionsCheckingInterval (30 s by default): often
    // enough here that a stalled client is cut off within its limit and a second (a quarter of it when shorter).
    http: { headersTimeout, requestTimeout, connectionsCheckingInterval: Math.min(1000, headersTimeout / 4) },
    requestTimeout,
    keepAliveTimeout: settings.keepAliveTimeoutSeconds * 1000,
    // No socket inactivity timeout: once a request is in, its handler may take its time (a lead written by an LLM
    // with retries, a feed's discovery), sending nothing meanwhile; the handler's own limits bound it.
    connectionTimeout: 0,
    requestIdHeader: false,
    genReqId: requestIdOf,
    clientErrorHandler,
  } satisfies FastifyHttpOptions<Server>;
}

/** What a client may name its request by (logs, error bodies); anything else gets an id of ours. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The request id: the client's `x-request-id` when it is a short safe token (a proxy's or a client's own id, so that
 * logs line up), otherwise a new UUID. A client's long or hostile text never reaches logs or error bodies.
 */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}

/** Node's own refusals (before any route runs), in the API's error shape. */
function describeClientError(error: NodeJS.ErrnoException & { reason?: string }): { status: number; body: Static<typeof ErrorBody> } {
  const body = (code: ErrorCode, message: string) => errorBody(code, message);
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { status: 408, body: body('request_timeout', 'The request did not arrive in time; the connection is closed') };
  }
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return {
      status: 431,
      body: body('headers_too_large', `The request's headers are larger than the ${Math.round(maxHeaderSize / 1024)} KiB this server accepts`),
    };
  }
  // llhttp's reasons are fixed texts ("Invalid header value char"), never the client's bytes.
  const reason = error.code?.startsWith('HPE_') && error.reason ? `: ${error.reason}` : '';
  return { status: 400, body: body('validation_failed', `The request is not valid HTTP${reason}`) };
}

/**
 * Fastify's clientErrorHandler: a request Node could not read (headers too large, a control character in a header,
 * a client too slow) is answered in the one error shape with `connection: close`, then the connection ends. An
 * earlier request of the same connection still being answered is answered first; nothing is written into a response
 * that has already begun (it would corrupt it).
 */
function clientErrorHandler(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || error.code === 'EPIPE' || socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const { status, body } = describeClientError(error);
  this.log.debug({ err: error, status }, 'client error before routing');
  // Nothing more is read as requests: whatever the client still sends is dropped, so that the close is not a reset
  // that could discard the answer on its way.
  socket.removeAllListeners('data');
  socket.on('data', () => undefined);
  socket.resume();
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (inFlight && inFlight.req?.complete && !inFlight.writableFinished) {
    // A complete request before this one (pipelined) is being handled: its answer goes out first.
    inFlight.once('finish', () => answer(socket, status, body));
    return;
  }
  if (inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  answer(socket, status, body);
}

function answer(socket: Socket, status: number, body: Static<typeof ErrorBody>): void {
  if (socket.destroyed || !socket.writable) return;
  const json = JSON.stringify(body);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
      'content-type: application/json; charset=utf-8\r\n' +
      `content-length: ${Buffer.byteLength(json)}\r\n` +
      'connection: close\r\n\r\n' +
      json,
  );
  // A client that keeps the connection open after the answer is dropped a second later.
  setTimeout(() => socket.destroy(), 1000).unref();
}
