/** Valibot schemas as users write them: dates, views and loose objects (docs/procedures.md, "Validators"). */
import { toStandardJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { generateOpenApi } from '../openapi/generate.js';
import { createApp } from '../server/create-app.js';
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

// As on Cloudflare Workers, where Proceed cannot load the converter itself.
const wrapped = procedures('meetings', {
  listMeetings: procedure()
    .input(toStandardJsonSchema(v.object({ since: v.optional(v.nullable(v.date())) })))
    .query(({ input }) => ({ since: input.since instanceof Date ? input.since.toISOString() : null })),
  createMeeting: procedure()
    .input(toStandardJsonSchema(v.object({ at: v.array(v.date()) })))
    .mutation(({ input }) => ({ days: input.at.map((day) => day.getUTCDate()) })),
});

describe('Valibot schemas', () => {
  it('wrapped with toStandardJsonSchema(), get their dates coerced as plain ones do', async () => {
    const wrappedApp = createApp({ logger: false }).mount([wrapped]);
    const found = await wrappedApp.inject({ method: 'GET', url: '/api/meetings?since=2024-05-01' });
    expect(found.json()).toEqual({ since: '2024-05-01T00:00:00.000Z' });
    const created = await wrappedApp.inject({
      method: 'POST',
      url: '/api/meetings',
      payload: { at: ['2024-05-02', '2024-05-03T10:00:00Z'] },
    });
    expect(created.json()).toEqual({ days: [2, 3] });
  });

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
    const views =
      answer !== undefined && 'content' in answer ? answer.content?.['application/json']?.schema : undefined;
    expect(views).toEqual({
      oneOf: [
        {
          type: 'object',
          properties: { id: { type: 'string' }, title: { type: 'string' } },
          required: ['id', 'title'],
          additionalProperties: false,
        },
        {
          type: 'object',
          properties: { id: { type: 'string' }, title: { type: 'string' }, reviewer: { type: 'string' } },
          required: ['id', 'title', 'reviewer'],
          additionalProperties: false,
        },
      ],
    });
  });
});
