import { describe, expect, it } from 'vitest';
import { ContextPipeline } from './context.js';
import { requestInfo } from './fixtures/request.js';

const request = requestInfo();

describe('ContextPipeline', () => {
  it("holds the app's context and the request, synchronously when every step is", () => {
    const pipeline = new ContextPipeline(() => ({ tenant: 't1' }));
    pipeline.add((ctx) => {
      ctx.user = { id: 'u1' };
    });
    const ctx = pipeline.build(request);
    expect(ctx).not.toBeInstanceOf(Promise);
    expect(ctx).toEqual({ request, tenant: 't1', user: { id: 'u1' } });
  });

  it("never lets the app's context replace the request", async () => {
    const made = new ContextPipeline(() => ({ request: 'not the request', tenant: 't1' })).build(request);
    expect((made as { request: unknown }).request).toBe(request);
    const awaited = await new ContextPipeline(async () => ({ request: 'not the request' })).build(request);
    expect(awaited.request).toBe(request);
  });

  it('runs the steps in order, waiting for one that waits', async () => {
    const pipeline = new ContextPipeline();
    const order: string[] = [];
    pipeline.add(async (ctx) => {
      await Promise.resolve();
      order.push('first');
      ctx.auth = 'checked';
    });
    pipeline.add((ctx) => {
      order.push(`second saw ${String(ctx.auth)}`);
    });
    const ctx = await pipeline.build(request);
    expect(order).toEqual(['first', 'second saw checked']);
    expect(ctx).toEqual({ request, auth: 'checked' });
  });
});
