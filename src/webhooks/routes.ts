import type { FastifyPluginAsync } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { principalOf, requireApiKey } from '../accounts/api-key-hook.js';
import type { AccountService } from '../accounts/service.js';
import { forbidden } from '../errors.js';
import { errorResponses, NoContent } from '../http/schemas.js';
import { type PlanRateLimitOptions, registerPlanRateLimit } from '../leads/rate-limit.js';
import {
  DeliveriesPage,
  DeliveriesQuery,
  Delivery,
  DeliveryDetail,
  DeliveryParams,
  Endpoint,
  EndpointBody,
  EndpointList,
  EndpointParams,
  EndpointPatch,
  EndpointWithSecret,
} from './schemas.js';
import type { WebhookService } from './service.js';

export interface WebhookRouteOptions {
  accounts: AccountService;
  webhooks: WebhookService;
  /** The lead API's per-plan requests a minute: these routes spend the same count. */
  rateLimit: PlanRateLimitOptions;
}

const TAGS = ['Webhooks'];

/** Webhook endpoints under /api/client/webhooks, with the lead API's keys (the account owner's) and its rate limit. */
export const webhookRoutes: FastifyPluginAsync<WebhookRouteOptions> = async (plugin, { accounts, webhooks, rateLimit }) => {
  plugin.addHook('onRequest', requireApiKey(accounts, { allowBearer: false }));
  plugin.addHook('onRequest', async (request) => {
    if (principalOf(request).kind !== 'owner') throw forbidden('Webhooks belong to the account owner; portal client keys cannot manage them');
  });
  await registerPlanRateLimit(plugin, rateLimit);
  const app = plugin.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/webhooks',
    { schema: { tags: TAGS, summary: "The account's webhook endpoints", response: { 200: EndpointList, ...errorResponses(401, 403, 429) } } },
    async (request) => ({ endpoints: await webhooks.list(principalOf(request)) }),
  );

  app.post(
    '/webhooks',
    {
      schema: {
        tags: TAGS,
        summary: 'Add an endpoint; its signing secret is in this answer only',
        description: 'At most 20 endpoints per account (409 past that). The URL must be https and name a public host.',
        body: EndpointBody,
        response: { 201: EndpointWithSecret, ...errorResponses(400, 401, 403, 409, 429) },
      },
    },
    async (request, reply) => {
      const { endpoint, secret } = await webhooks.create(principalOf(request), request.body);
      return reply.code(201).send({ ...endpoint, secret });
    },
  );

  app.get(
    '/webhooks/:id',
    {
      schema: {
        tags: TAGS,
        summary: 'One endpoint',
        params: EndpointParams,
        response: { 200: Endpoint, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => webhooks.get(principalOf(request), request.params.id),
  );

  app.patch(
    '/webhooks/:id',
    {
      schema: {
        tags: TAGS,
        summary: 'Change an endpoint (URL, description, events, enabled); enabling it again resumes its waiting deliveries',
        params: EndpointParams,
        body: EndpointPatch,
        response: { 200: Endpoint, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => webhooks.update(principalOf(request), request.params.id, request.body),
  );

  app.delete(
    '/webhooks/:id',
    {
      schema: {
        tags: TAGS,
        summary: 'Delete an endpoint and its delivery log',
        params: EndpointParams,
        response: { 204: NoContent, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await webhooks.delete(principalOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/webhooks/:id/rotate-secret',
    {
      schema: {
        tags: TAGS,
        summary: 'A new signing secret, in this answer only; the old one also signs for 24 hours',
        params: EndpointParams,
        response: { 200: EndpointWithSecret, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => {
      const { endpoint, secret } = await webhooks.rotateSecret(principalOf(request), request.params.id);
      return { ...endpoint, secret };
    },
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      schema: {
        tags: TAGS,
        summary: "The endpoint's deliveries, newest first",
        params: EndpointParams,
        querystring: DeliveriesQuery,
        response: { 200: DeliveriesPage, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => webhooks.listDeliveries(principalOf(request), request.params.id, request.query),
  );

  app.get(
    '/webhooks/:id/deliveries/:deliveryId',
    {
      schema: {
        tags: TAGS,
        summary: 'One delivery with its body and every attempt',
        params: DeliveryParams,
        response: { 200: DeliveryDetail, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => webhooks.getDelivery(principalOf(request), request.params.id, request.params.deliveryId),
  );

  app.post(
    '/webhooks/:id/test',
    {
      schema: {
        tags: TAGS,
        summary: 'Send a webhook.test event to this endpoint',
        params: EndpointParams,
        response: { 202: Delivery, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => reply.code(202).send(await webhooks.sendTest(principalOf(request), request.params.id)),
  );

  app.post(
    '/webhooks/:id/deliveries/:deliveryId/retry',
    {
      schema: {
        tags: TAGS,
        summary: 'Send a delivery again now (same event id and body), with a fresh retry schedule',
        params: DeliveryParams,
        response: { 202: Delivery, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => reply.code(202).send(await webhooks.retryDelivery(principalOf(request), request.params.id, request.params.deliveryId)),
  );
};
