/** The route table `proceed routes` and `proceed dev` print. */
import type { MountedRoute } from '../core/route-table.js';

/** One row of the route table, as `proceed routes --json` prints it. */
export interface RouteRow {
  method: string;
  path: string;
  procedure: string;
  guards: string[];
  /** What the route answers when it is no JSON answer: a WebSocket, an event stream, a file. */
  opens?: 'websocket' | 'event stream' | 'file';
}

const opened = { socket: 'websocket', events: 'event stream', download: 'file' } as const;

/**
 * The rows of an app's route table, in mount order.
 *
 * @example
 * routeRows(app.routes)[0] // { method: 'GET', path: '/api/notes', procedure: 'notes.listNotes', guards: [] }
 */
export function routeRows(routes: readonly MountedRoute[]): RouteRow[] {
  return routes.map((route) => {
    const kind = route.definition.output?.kind;
    const opens = kind === 'socket' || kind === 'events' || kind === 'download' ? opened[kind] : undefined;
    return {
      method: route.method,
      path: route.path,
      procedure: `${route.collection}.${route.name}`,
      // The guards, then the steps that check access (`owned()`): who may call the route.
      guards: [
        ...route.definition.guards.map((guard) => guard.name),
        ...route.definition.documentation.flatMap((documents) =>
          documents.check === undefined ? [] : [documents.check],
        ),
      ],
      ...(opens === undefined ? {} : { opens }),
    };
  });
}

/**
 * The route table as aligned text columns: METHOD, PATH, PROCEDURE, GUARDS.
 *
 * @example
 * process.stdout.write(formatRouteTable(routeRows(app.routes)));
 */
export function formatRouteTable(rows: readonly RouteRow[]): string {
  if (rows.length === 0) return 'No routes: the app mounts no procedures.\n';
  const cells = [
    ['METHOD', 'PATH', 'PROCEDURE', 'GUARDS'],
    ...rows.map((row) => [
      row.method,
      row.path,
      // A plain GET to a socket's route is a 426: the table says what the route opens.
      row.opens === undefined ? row.procedure : `${row.procedure} (${row.opens})`,
      row.guards.join(', ') || '-',
    ]),
  ];
  const widths = [0, 1, 2].map((column) => Math.max(...cells.map((line) => line[column]?.length ?? 0)));
  return cells
    .map((line) =>
      line
        .map((cell, column) => (column < 3 ? cell.padEnd(widths[column] ?? 0) : cell))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
    .concat('\n');
}
