import type { FastifyReply, FastifyRequest } from 'fastify';
import { page, type PageOptions } from './layout.js';

export function sendHtml(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(body);
}

/** Sends a page of the layout, with the viewer and CSRF token of the request. */
export function render(request: FastifyRequest, reply: FastifyReply, status: number, options: Omit<PageOptions, 'csrf' | 'viewer'>) {
  return sendHtml(reply, status, page({ ...options, csrf: request.dashboard.csrf, viewer: request.dashboard.viewer }));
}
