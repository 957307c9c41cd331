/** Commands, their options and help texts, and parsing with node:util parseArgs. */
import { availableParallelism } from 'node:os';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import { portOf } from '../core/options.js';
import { defaultEntries } from './entry.js';
import { UsageError } from './errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

export interface CommandSpec {
  name: string;
  summary: string;
  usage: string;
  options: Options;
}

const entryNote = `The entry is a module whose default export is an app (createApp(...)) or a function
returning one (sync or async). Default: the entry package.json names ("proceed": { "entry": … }),
else the first of ${defaultEntries.join(', ')} in the current directory.`;

const help = { help: { type: 'boolean', short: 'h' } } as const satisfies Options;

export const commands = {
  start: {
    name: 'start',
    summary: 'Run the app',
    usage: `Usage: proceed start [entry] [--port N] [--host H] [--workers N|auto]

Runs the app. It logs one line per route, serves until SIGTERM or SIGINT, then shuts down
gracefully (in-flight requests finish, the app's onClose steps run) and exits 0. A compiled
entry (dist/app.js) runs on plain node; a TypeScript entry (src/app.ts) needs tsx installed.

Options:
  -p, --port N        Port to listen on (0-65535). Default: PORT from the environment, else 3030
      --host H        Interface to listen on. Default: HOST from the environment, else 127.0.0.1
  -w, --workers N     Serve from N processes sharing the port (node:cluster); "auto": one per
                      CPU. A worker that dies is replaced; SIGTERM drains them all. The entry
                      sees { workers: N } and may refuse (an embedded database is one process only)
  -h, --help          Show this help

${entryNote}`,
    options: {
      ...help,
      port: { type: 'string', short: 'p' },
      host: { type: 'string' },
      workers: { type: 'string', short: 'w' },
    },
  },
  dev: {
    name: 'dev',
    summary: 'Run the app and restart it when files change',
    usage: `Usage: proceed dev [entry] [--port N] [--host H] [--watch DIR]...

Runs the app in a child process, prints its route table, and restarts it when a file under
the entry's directory or ./src changes (node_modules, dist and dot-directories are ignored).

Options:
  -p, --port N      Port to listen on. Default: PORT from the environment, else 3030
      --host H      Interface to listen on. Default: HOST from the environment, else 127.0.0.1
  -w, --watch DIR   Also watch DIR (repeatable)
  -h, --help        Show this help

${entryNote}`,
    options: {
      ...help,
      port: { type: 'string', short: 'p' },
      host: { type: 'string' },
      watch: { type: 'string', short: 'w', multiple: true },
    },
  },
  routes: {
    name: 'routes',
    summary: 'Print the route table',
    usage: `Usage: proceed routes [entry] [--json]

Prints every route of the app: method, full path, procedure (collection.name) and guards.
The app is loaded, not started.

Options:
      --json    Print a JSON array instead of a table
  -h, --help    Show this help

${entryNote}`,
    options: { ...help, json: { type: 'boolean' } },
  },
  openapi: {
    name: 'openapi',
    summary: 'Print or write the OpenAPI document',
    usage: `Usage: proceed openapi [entry] [--out FILE] [--title T] [--version V] [--format json|yaml] [--lint] [--asyncapi]

Prints the app's OpenAPI 3.1 document. When the app serves its documentation (the docs plugin
at {prefix}/docs), that exact document is printed; otherwise it is generated from the routes.

Options:
  -o, --out FILE     Write to FILE instead of standard output
      --title T      info.title. Default: the docs plugin's, else the nearest package.json's name
      --version V    info.version. Default: the docs plugin's, else the package.json's version
      --format F     json or yaml. Default: yaml when FILE ends in .yaml or .yml, else json
      --lint         Check the document with Spectral's OWASP API Security rules and Proceed's
                     override (openapi-owasp.spectral.yaml): prints each finding instead of the
                     document (written only with --out), exits 1 on an error. Needs
                     @stoplight/spectral-core, -parsers and -owasp-ruleset installed
      --asyncapi     The AsyncAPI 3.0 document of the app's WebSocket procedures instead
                     (made from the same OpenAPI document); an error when it has none
  -h, --help         Show this help

${entryNote}`,
    options: {
      ...help,
      out: { type: 'string', short: 'o' },
      title: { type: 'string' },
      version: { type: 'string' },
      format: { type: 'string' },
      lint: { type: 'boolean' },
      asyncapi: { type: 'boolean' },
    },
  },
  manifest: {
    name: 'manifest',
    summary: 'Print or write the route manifest for proceedjs/client',
    usage: `Usage: proceed manifest [entry] [--out FILE] [--prefix P]

Prints where each procedure lives, as JSON for createClient({ routes }) from proceedjs/client.
Procedures with conventional names need no manifest; .rest() overrides do.

Options:
  -o, --out FILE    Write to FILE instead of standard output; a FILE ending in .ts gets a
                    TypeScript module (export default … as const satisfies RouteManifest)
      --prefix P    Only the collections mounted under P (needed when one collection is mounted twice)
  -h, --help        Show this help

${entryNote}`,
    options: { ...help, out: { type: 'string', short: 'o' }, prefix: { type: 'string' } },
  },
  generate: {
    name: 'generate',
    summary: 'Add a resource to an app made by npm create proceed',
    usage: `Usage: proceed generate resource <name> <field:type>... [--singular S] [--dry-run]

Run in an app made by npm create proceed. For a plural collection name (bookmarks) it adds:
  src/schema.ts          the table: id, owner_id (a user), the fields, created_at, updated_at
  drizzle/               its SQL migration, by the app's drizzle-kit (npm run db:generate)
  src/<name>.ts          the resource (Bookmark) with public, owner and admin views per record,
                         and listBookmarks (cursor pages), getBookmark, createBookmark,
                         updateBookmark, deleteBookmark (the owner or an admin writes)
  src/app.ts             the procedures added to api (the typed client's type)
  test/<name>.test.ts    the CRUD through the typed client, on PGlite and PostgreSQL

Field types: string (up to 255 characters), text, integer, number, boolean, date (YYYY-MM-DD),
datetime (ISO 8601 with an offset), uuid; enum:a,b,c (one of the values); ref:users (a user's
id, with a foreign key and an index: author:ref:users is the field authorId).
After the type: ? makes a field optional (nullable), [] a list (tags:string[]), @owner a field
only its owner and admins see, @admin one only admins see (notes:text?@owner).
Nothing is written when anything is wrong; a failure midway puts every file back.
proceed destroy resource <name> takes it all back.

Options:
      --singular S   The resource's singular, when the name does not end in s (people: person)
      --dry-run      Print what would be written, and write nothing
  -h, --help         Show this help

Example:
  proceed generate resource bookmarks url:string tags:string[] status:enum:unread,read \\
    author:ref:users? notes:text?@owner`,
    options: { ...help, singular: { type: 'string' }, 'dry-run': { type: 'boolean' } },
  },
  destroy: {
    name: 'destroy',
    summary: 'Take back a resource proceed generate added',
    usage: `Usage: proceed destroy resource <name> [--dry-run]

Run in the app where proceed generate resource <name> ran. It removes src/<name>.ts and
test/<name>.test.ts, and takes the table out of src/schema.ts and the procedures out of
src/app.ts, leaving them as they were before. Its migration is removed when no database applied
it (DATABASE_URL, else PGlite in .data/db), no migration came after it and it is not committed;
otherwise the app's drizzle-kit writes a new one that drops the table. It refuses a table
generate did not make, and one another module still uses.

Options:
      --dry-run      Print what would be done, and change nothing
  -h, --help         Show this help

Example:
  proceed destroy resource bookmarks`,
    options: { ...help, 'dry-run': { type: 'boolean' } },
  },
} as const satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof commands;

export const mainUsage = `Usage: proceed <command> [entry] [options]
       proceed generate resource <name> <field:type>...
       proceed destroy resource <name>

Commands:
${Object.values(commands)
  .map((command) => `  ${command.name.padEnd(10)}${command.summary}`)
  .join('\n')}

Options:
  -h, --help      Show help; \`proceed <command> --help\` for a command's options
  -v, --version   Show the version of proceed

${entryNote}`;

export function isCommandName(name: string): name is CommandName {
  return Object.hasOwn(commands, name);
}

/** parseArgs' messages carry advice about `--` that does not fit here: keep the first sentence. */
function firstSentence(message: string): string {
  const end = message.indexOf('. ');
  return end === -1 ? message : message.slice(0, end + 1);
}

type Parsed<C extends CommandSpec> = ReturnType<
  typeof parseArgs<{ options: C['options']; allowPositionals: true; strict: true }>
>;

/**
 * Parses a command's arguments: at most one positional (the entry). Throws {@link UsageError}.
 *
 * @example
 * const { values, entry } = parseCommand(commands.routes, ['--json']);
 */
export function parseCommand<C extends CommandSpec>(
  command: C,
  args: readonly string[],
): { values: Parsed<C>['values']; entry: string | undefined } {
  let parsed: Parsed<C>;
  try {
    parsed = parseArgs({
      args: [...args],
      options: command.options,
      allowPositionals: true,
      strict: true,
    }) as Parsed<C>;
  } catch (error) {
    throw new UsageError(firstSentence((error as Error).message), command.usage);
  }
  if (parsed.positionals.length > 1) {
    throw new UsageError(
      `Unexpected argument "${parsed.positionals[1]}": ${command.name} takes one entry`,
      command.usage,
    );
  }
  // Checked before the app loads, as a bad value is.
  if ((parsed.values as { out?: unknown }).out === '')
    throw new UsageError('--out names the file to write: it was given an empty name', command.usage);
  return { values: parsed.values, entry: parsed.positionals[0] };
}

/**
 * A port from a flag or the environment: an integer from 0 to 65535.
 *
 * @example
 * parsePort('8080', '--port', usage) // 8080
 */
export function parsePort(text: string, source: string, usage: string): number {
  const port = portOf(text);
  if (port === undefined) {
    throw new UsageError(`${source} must be a port number from 0 to 65535, got "${text}"`, usage);
  }
  return port;
}

/** The largest `--workers`: more processes than this is a typo, not a plan. */
const maxWorkers = 256;

/**
 * `--workers`: a whole number from 1 to 256, or `auto` for one per CPU.
 *
 * @example
 * parseWorkers('auto', usage) // os.availableParallelism()
 */
export function parseWorkers(text: string, usage: string): number {
  if (text.trim() === 'auto') return availableParallelism();
  const count = /^\d{1,3}$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!Number.isInteger(count) || count < 1 || count > maxWorkers) {
    throw new UsageError(
      `--workers must be a number from 1 to ${maxWorkers} or "auto", got "${text}"`,
      usage,
    );
  }
  return count;
}

/**
 * Port and host with their precedence: flag, then environment, then 3030 / 127.0.0.1.
 *
 * @example
 * listenAddress({ port: '4000' }, process.env, usage) // { port: 4000, host: '127.0.0.1' }
 */
export function listenAddress(
  flags: { port?: string | undefined; host?: string | undefined },
  env: NodeJS.ProcessEnv,
  usage: string,
): { port: number; host: string } {
  const port =
    flags.port !== undefined
      ? parsePort(flags.port, '--port', usage)
      : env.PORT !== undefined && env.PORT !== ''
        ? parsePort(env.PORT, 'PORT', usage)
        : 3030;
  const host = flags.host ?? (env.HOST !== undefined && env.HOST !== '' ? env.HOST : '127.0.0.1');
  if (host.trim() === '') throw new UsageError('--host cannot be empty', usage);
  return { port, host };
}
