/** Valibot schemas as users write them: dates, views and loose objects (docs/procedures.md, "Validators"). */
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { generateOpenApi } from '../openapi/generate.js';
import { createApp } from '../server/app.js';
import { procedure, procedures } from './procedure.js';

const Public = v.object({ id: v.string(), title: v.string() });
const Admin = v.object({ id: v.string(), title: v.string(), reviewer: v.string() });

const events = procedures('events', {
  listEvents: procedure()
    .input(v.looseObject({ since: v.optional(v.date()), days: v.optional(v.array(v.date())) }))
    .query(({ input }) => ({
      since: input.since instanceof Date ? input.since.toISOString() : null,
      days: (input.days ?? []).map((day) => day.getUTCDate()),
    })),
  createEvent: procedure()
    .input(v.object({ title: v.string(), schedule: v.object({ startsAt: v.date() }) }))
    .mutation(({ input }) => ({ startsAt: input.schedule.startsAt.toISOString(), title: input.title })),
  getEvent: procedure()
    .output({ public: Public, admin: Admin }, (ctx: { request: { headers: Record<string, unknown> } }) =>
      ctx.request.headers['x-role'] === 'admin' ? 'admin' : 'public',
    )
    .query(() => ({ id: 'e1', title: 'Launch', reviewer: 'Grace', secret: 'never sent' })),
});

const app = createApp({ logger: false }).mount([events]);

describe('Valibot schemas', () => {
  it('get query dates coerced, a date off the calendar refused, and a loose object’s other keys taken', async () => {
    const found = await app.inject({
      method: 'GET',
      url: '/api/events?since=2024-05-01&days=2024-05-02&_=17',
    });
    expect(found.json()).toEqual({ since: '2024-05-01T00:00:00.000Z', days: [2] });
    expect((await app.inject({ method: 'GET', url: '/api/events?since=2024-02-30' })).statusCode).toBe(400);
  });

  it('get body dates revived at depth, and unknown body keys refused', async () => {
    const created = await app.inject({
      method: 'POST',
      url: '/api/events',
      payload: { title: 'Launch', schedule: { startsAt: '2024-05-01T10:00:00Z' } },
    });
    expect(created.json()).toEqual({ startsAt: '2024-05-01T10:00:00.000Z', title: 'Launch' });
    const typo = await app.inject({
      method: 'POST',
      url: '/api/events',
      payload: { title: 'Launch', schedule: { startsAt: '2024-05-01T10:00:00Z', startAt: 'x' } },
    });
    expect(typo.statusCode).toBe(400);
    expect(typo.json().errors).toEqual([
      { path: 'schedule.startAt', message: 'Unknown key; did you mean "startsAt"?' },
    ]);
  });

  it('answer each caller at its view, never a field above it', async () => {
    expect((await app.inject({ method: 'GET', url: '/api/events/e1' })).json()).toEqual({
      id: 'e1',
      title: 'Launch',
    });
    const admin = await app.inject({ method: 'GET', url: '/api/events/e1', headers: { 'x-role': 'admin' } });
    expect(admin.json()).toEqual({ id: 'e1', title: 'Launch', reviewer: 'Grace' });
  });

  it('are described in the document as Zod’s are: dates as date-time strings, views as alternatives', () => {
    const document = generateOpenApi({ app, info: { title: 'Events', version: '1' } });
    const parameters = document.paths['/api/events']?.get?.parameters ?? [];
    expect(parameters).toContainEqual(
      expect.objectContaining({ name: 'since', schema: { type: 'string', format: 'date-time' } }),
    );
    const answer = document.paths['/api/events/{id}']?.get?.responses['200'];
    expect(JSON.stringify(answer)).toContain('reviewer');
  });
});
