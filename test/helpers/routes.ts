import { channel } from 'node:diagnostics_channel';
import type { FastifyInstance, HTTPMethods } from 'fastify';

interface AppRoute {
  method: string;
  /** The full path, prefix included, as Fastify registered it (`/publications/:app_id/feeds`). */
  url: string;
  /** Registered as `/` under a prefix: Fastify may add `prefix/` beside `prefix`, without telling onRoute. */
  prefixRoot: boolean;
}

// Fastify announces each instance it creates on this channel, before anything is registered on it (its documented
// hook for instrumentation): an onRoute hook added there sees every route of every app built after this module loads.
const routesByApp = new WeakMap<FastifyInstance, AppRoute[]>();
channel('fastify.initialization').subscribe((message) => {
  const { fastify } = message as { fastify: FastifyInstance };
  const routes: AppRoute[] = [];
  routesByApp.set(fastify, routes);
  fastify.addHook('onRoute', (route) => {
    const methods: HTTPMethods[] = Array.isArray(route.method) ? route.method : [route.method];
    const prefixRoot = route.prefix !== '' && route.routePath === '';
    for (const method of methods) routes.push({ method: method.toUpperCase(), url: route.url, prefixRoot });
  });
});

/** Every route of `app` with `method` (GET, POST…), as full paths, each once, in the order they were registered. */
export function appRoutes(app: FastifyInstance, method: string): string[] {
  const routes = routesByApp.get(app);
  if (!routes) throw new Error('the app was built before test/helpers/routes.ts was imported: import it from the test file');
  const urls = routes
    .filter((route) => route.method === method)
    .flatMap((route) => (route.prefixRoot && app.hasRoute({ method, url: `${route.url}/` }) ? [route.url, `${route.url}/`] : [route.url]));
  return [...new Set(urls)];
}
