// One autocannon measurement, with latencies of the 2xx responses kept at full (sub-millisecond) precision:
// autocannon's own histogram rounds to whole milliseconds, too coarse for a p50 of a fraction of one. Requests per
// second, totals and status codes are autocannon's.

import autocannon from 'autocannon';

export interface LoadRequest {
  method?: 'GET' | 'POST';
  path: string;
  body?: string;
}

export interface LoadOptions {
  /** http://127.0.0.1:PORT */
  origin: string;
  /** Sent in turn by every connection; each is encoded once, up front. */
  requests: LoadRequest[];
  seconds: number;
  connections: number;
  headers?: Record<string, string>;
}

export interface Measurement {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  max: number;
  total: number;
  non2xx: number;
  statusCodes: Record<string, number>;
  /** Socket errors and timeouts. */
  errors: number;
  timeouts: number;
}

export function measure(options: LoadOptions): Promise<Measurement> {
  const latencies: number[] = [];
  return new Promise((resolve, reject) => {
    const [first, ...more] = options.requests;
    if (!first) throw new Error('measure: no requests');
    const instance = autocannon(
      {
        url: `${options.origin}${first.path}`,
        method: first.method ?? 'GET',
        body: first.body,
        requests: more.length > 0 ? options.requests : undefined,
        connections: options.connections,
        duration: options.seconds,
        headers: options.headers,
        timeout: 10,
      },
      (error: unknown, result: autocannon.Result) => {
        if (error) return reject(error instanceof Error ? error : new Error(String(error)));
        const sorted = Float64Array.from(latencies).sort();
        const statusCodes: Record<string, number> = {};
        for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stats.count ?? 0;
        resolve({
          requestsPerSecond: result.requests.mean,
          p50: percentile(sorted, 0.5),
          p99: percentile(sorted, 0.99),
          max: sorted.length > 0 ? sorted[sorted.length - 1]! : Number.NaN,
          total: result.requests.total,
          non2xx: result.non2xx,
          statusCodes,
          errors: result.errors,
          timeouts: result.timeouts,
        });
      },
    );
    // A connection's first response is left out of the latencies: autocannon starts its clock when it queues the
    // first request, before the connection is open and while it is still encoding the other connections' requests.
    const started = new Set<unknown>();
    instance.on('response', (client, statusCode, _bytes, responseTime) => {
      if (!started.has(client)) {
        started.add(client);
        return;
      }
      if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    });
  });
}

function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}
