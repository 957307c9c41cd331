/**
 * The same two endpoints in Proceed: a validated GET by id and a validated POST, each answering a
 * view; and a page of 100 items (for the cost of entity tags and compression, BENCH_HTTP_CACHE=off).
 */
import { createApp, procedure, procedures } from 'proceedjs';
import { metricsPlugin } from 'proceedjs/metrics';
import { resource } from 'proceedjs/resource';
import { z } from 'zod';
import { item, ready } from './data.js';

const Item = resource('Item', {
  public: { id: z.string(), title: z.string(), excerpt: z.string() },
  authenticated: { content: z.string(), authorId: z.string() },
});

const page = Array.from({ length: 100 }, (_, index) => ({ ...item, title: `${item.title} ${index}` }));

const items = procedures('items', {
  listItems: procedure()
    .output(z.array(Item.public))
    .query(() => page),
  getItem: procedure()
    .input(z.object({ id: z.uuid() }))
    .output(Item.public)
    .query(({ input }) => ({ ...item, id: input.id })),
  createItem: procedure()
    .input(
      z.object({
        title: z.string().min(1).max(200),
        content: z.string().min(1).max(50_000),
        tags: z.array(z.string()).max(10).optional(),
      }),
    )
    .output(Item.public)
    .mutation(({ input }) => ({ ...item, title: input.title, content: input.content })),
});

const httpCache = process.env.BENCH_HTTP_CACHE;
const app = createApp({
  logger: false,
  ...(httpCache === 'off' || httpCache === 'compression' ? { entityTags: false } : {}),
  ...(httpCache === 'off' || httpCache === 'tags' ? { compression: false as const } : {}),
}).mount([items]);
// BENCH_METRICS=1: the same app with the metrics plugin, to measure what it costs.
if (process.env.BENCH_METRICS === '1') await app.register(metricsPlugin, { port: 0 });
ready(await app.listen({ port: 0, handleSignals: false }));
