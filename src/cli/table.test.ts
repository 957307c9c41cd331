import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { eventStream } from '../core/events.js';
import { download, sendFile } from '../core/files.js';
import { procedure, procedures } from '../core/procedure.js';
import { webSocket } from '../core/sockets.js';
import { createApp } from '../server/create-app.js';
import { formatRouteTable, routeRows } from './table.js';

describe('the route table', () => {
  it('says which routes open a WebSocket or an event stream, or answer a file', () => {
    const rooms = procedures('rooms', {
      listRooms: procedure().query(() => []),
      roomSocket: procedure()
        .rest({ method: 'GET', path: '/rooms/socket' })
        .output(webSocket({ receive: z.object({}), send: z.object({}) }))
        .query(async () => undefined),
      roomEvents: procedure()
        .rest({ method: 'GET', path: '/rooms/events' })
        .output(eventStream(z.object({})))
        .query(async function* () {}),
      roomExport: procedure()
        .rest({ method: 'GET', path: '/rooms/export' })
        .output(download({ types: ['text/csv'] }))
        .query(() => sendFile(new Blob(['a']))),
    });
    const rows = routeRows(createApp({ logger: false }).mount([rooms]).routes);
    expect(rows.map(({ procedure, opens }) => [procedure, opens])).toEqual([
      ['rooms.listRooms', undefined],
      ['rooms.roomSocket', 'websocket'],
      ['rooms.roomEvents', 'event stream'],
      ['rooms.roomExport', 'file'],
    ]);
    expect(Object.keys(rows[0] ?? {})).not.toContain('opens');
    expect(formatRouteTable(rows).split('\n')[2]).toBe(
      'GET     /api/rooms/socket  rooms.roomSocket (websocket)     -',
    );
  });
});
