// The caller's trace context on each call (docs/tracing.md#clients): with
// OpenTelemetry's W3C propagator and a context manager registered, a call
// made inside a span's context carries its traceparent; outside, nothing.
// The calls go over real gRPC to a server started here that keeps what each
// call's metadata said.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Server, ServerCredentials, type Metadata } from '@grpc/grpc-js';
import { context, propagation, trace, TraceFlags } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { Client } from '@redlockd/client';
import { AcquireResponse, FailureReason, LockService } from '@redlockd/client/proto';

const seen: Metadata[] = [];
const server = new Server();
let client: Client;

before(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  server.addService(LockService, {
    acquire: (call: { metadata: Metadata }, callback: (error: null, reply: AcquireResponse) => void) => {
      seen.push(call.metadata);
      callback(null, { ...AcquireResponse.decode(new Uint8Array()), acquired: false, reason: FailureReason.FAILURE_REASON_TAKEN });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, port) =>
      error ? reject(error) : resolve(port),
    ),
  );
  client = new Client({ address: `127.0.0.1:${port}` });
});

after(() => {
  client.close();
  server.forceShutdown();
});

test('a call made in a span context carries its traceparent, one made outside none', async () => {
  const span = trace.wrapSpanContext({
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    spanId: '00f067aa0ba902b7',
    traceFlags: TraceFlags.SAMPLED,
  });
  await context.with(trace.setSpan(context.active(), span), () => client.acquire('traced/node', { ttl: 5_000 }));
  assert.equal(await client.acquire('traced/node', { ttl: 5_000 }), null);
  assert.equal(seen.length, 2);
  assert.deepEqual(seen[0].get('traceparent'), ['00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01']);
  assert.deepEqual(seen[1].get('traceparent'), []);
});
