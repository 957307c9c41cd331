/**
 * The blog's end-to-end harness. Each suite starts the real app on a real socket, on an
 * in-memory PGlite or on a fresh PostgreSQL database made for it (and dropped after it). Tests
 * talk to it with Proceed's typed client (`blog.client(token)`) wherever a call fits it, and with
 * raw requests (`blog.get`, `blog.post`, …) where they send what no client would (malformed JSON,
 * wrong media types, another authorization scheme, input its types refuse) or check what a client
 * cannot see (the exact status and the headers of a success, the raw text). Both go through one
 * `fetch` that checks every answer against the app's own OpenAPI document and looks for leaked
 * passwords and hashes, so no test can receive an undocumented or leaky response without failing.
 */
import { createHmac, randomBytes } from 'node:crypto';
import pg from 'pg';
import type { App, Problem } from 'proceedjs';
import { type Client, createClient, ProblemError, routeManifest } from 'proceedjs/client';
import { createResponseValidator, type OpenApiDocument, type ResponseValidator } from 'proceedjs/openapi';
import { afterAll, beforeAll, expect, inject } from 'vitest';
import { api, type BlogOptions, createBlogApp } from '../src/app.js';
import type { BlogContext } from '../src/context.js';
import { type Database, openDatabase } from '../src/db/index.js';
import type { blogErrors } from '../src/errors.js';
import type { Mailer } from '../src/mailer.js';
import { Post, User } from '../src/resources.js';
import { attachmentsDirectoryOf, createPostgresDatabase } from './databases.js';
import { blogRuntime, type RuntimeBlog, startOnRuntime } from './runtimes.js';

export type { Problem } from 'proceedjs';

// ---------------------------------------------------------------------------------------------
// Engines

export interface Engine {
  name: 'PGlite' | 'PostgreSQL';
  /** No PostgreSQL server reachable: the suite is skipped (CI already fails in the global setup). */
  skip: boolean;
  /** A new empty database for one app (open already, or at `url`); `drop` removes it. */
  open(): Promise<{ url: string; database?: Database; drop(): Promise<void> }>;
}

/**
 * The engines every shared suite runs on. A blog on another runtime (BLOG_RUNTIME) runs on
 * PostgreSQL only: the runtime is what varies there, and both engines are covered on Node.
 */
export function engines(): Engine[] {
  const postgresUrl = inject('postgresUrl');
  const all: Engine[] = [
    {
      name: 'PGlite',
      skip: false,
      open: async () => ({
        url: 'memory://',
        // From the process's migrated snapshot: a second instead of five per suite.
        database: await openDatabase('memory://', { fromTemplate: true }),
        drop: async () => undefined,
      }),
    },
    {
      name: 'PostgreSQL',
      skip: postgresUrl === null,
      open: () => createPostgresDatabase(postgresUrl ?? ''),
    },
  ];
  return blogRuntime() === undefined ? all : all.filter((engine) => engine.name === 'PostgreSQL');
}

// ---------------------------------------------------------------------------------------------
// Views and bodies

/** The fields of each view, from the blog's resources (resources.test.ts pins them to the docs). */
export const views = {
  userPublic: Object.keys(User.public.shape),
  userAuthenticated: Object.keys(User.authenticated.shape),
  userAdmin: Object.keys(User.admin.shape),
  postPublic: Object.keys(Post.public.shape),
  postAuthenticated: Object.keys(Post.authenticated.shape),
} as const;

/** The typed client of the blog, its own error codes included. */
export type BlogClient = Client<typeof api, typeof blogErrors>;
type Answer<F> = F extends (...args: never[]) => Promise<infer R> ? R : never;

/** What the routes answer, as the typed client types it (dates as strings). */
export type Session = Answer<BlogClient['auth']['login']>;
export type PostPublic = Answer<BlogClient['posts']['getPost']>;
export type PostAuthenticated = Answer<BlogClient['posts']['createPost']>;
/** A post in whichever view the caller gets. */
export type PostView = PostPublic & Partial<PostAuthenticated>;
export type UserAdmin = Answer<BlogClient['users']['createUser']>;
/** A user in whichever view the caller gets. */
export type UserView = Answer<BlogClient['users']['getUser']> & Partial<UserAdmin>;

export interface CursorPage<T> {
  data: T[];
  nextCursor: string | null;
  prevCursor: string | null;
}

export interface OffsetPage<T> {
  data: T[];
  meta: { page: number; limit: number; total: number; totalPages: number };
}

/** Asserts that an object has exactly these keys: nothing above (or below) its view. */
export function expectKeys(value: unknown, keys: readonly string[]): void {
  expect(Object.keys(value as object).sort()).toEqual([...keys].sort());
}

// ---------------------------------------------------------------------------------------------
// HTTP

export interface Reply<T> {
  status: number;
  headers: Headers;
  /** The raw body text. */
  text: string;
  /** The parsed JSON body (undefined when there is none). */
  body: T;
}

export interface RequestOptions {
  /** Sent as JSON with `content-type: application/json`. */
  json?: unknown;
  /** A raw body; set `contentType` yourself. */
  body?: string;
  contentType?: string;
  token?: string;
  headers?: Record<string, string>;
}

const leakPattern = /scrypt\$|password_?hash|"password"\s*:/i;

/** A connection to a running blog whose every exchange is checked (conformance and leaks). */
export interface Connection {
  origin: string;
  document: OpenApiDocument;
  /** `fetch`, with every answer checked; what the typed client uses. */
  fetch: typeof fetch;
  request<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<Reply<T>>;
}

export interface BlogInstance extends Connection {
  /** Every reset mail the app sent. */
  mail: { to: string; name: string; token: string; expiresAt: Date }[];
  admin: { email: string; password: string };
  /** The JWT secret the app signs with (to forge tokens in attack tests). */
  secret: string;
  /** Where its database is: another instance may open the same one. */
  databaseUrl: string;
  /** What it was started with (on a runtime, passed as its environment). */
  settings: Partial<BlogOptions>;
  /** Runs SQL on its database, to see what requests left there (rows that must be gone, say). */
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
  close(): Promise<void>;
}

let emailCounter = 0;
/** An email no other test uses, readable in failures. */
export function uniqueEmail(label = 'user'): string {
  emailCounter += 1;
  return `${label}.${emailCounter}.${randomBytes(4).toString('hex')}@example.com`;
}

/** A JWT secret as long as production demands. */
export const testSecret = (): string => randomBytes(32).toString('hex');

/** The blog's PASSWORD_HASH_COST in its suites: cheap, and refused in production. */
export const testPasswordCost = { N: 1024, r: 8, p: 1 } as const;

/**
 * Connects to a blog at `origin`: reads its OpenAPI document and returns a `fetch` (and a raw
 * `request` on top of it) that checks every answer against it and against leaks of
 * `knownPasswords` and of any password sent.
 */
export async function connect(origin: string, knownPasswords: readonly string[] = []): Promise<Connection> {
  const document = (await (await fetch(`${origin}/api/docs/json`)).json()) as OpenApiDocument;
  const check = createResponseValidator(document);
  const checkUnrouted = unroutedValidator(document);
  const passwords = new Set<string>(knownPasswords);

  const checkedFetch = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const method = init.method ?? 'GET';
    const path = `${url.pathname}${url.search}`;
    if (typeof init.body === 'string') {
      try {
        collectPasswords(JSON.parse(init.body), passwords);
      } catch {
        // Malformed JSON on purpose: nothing to collect.
      }
    }
    const response = await fetch(url, init);
    const text = await response.text();
    const contentType = response.headers.get('content-type') ?? undefined;
    const where = `${method} ${path} → ${response.status}`;

    // Conformance: the answer must be one the document promises.
    let errors = check(method, path, response.status, contentType, text);
    if (errors.length === 1 && /no documented path matches|is not documented$/.test(errors[0] ?? '')) {
      // No operation owns this method and path: only the router's 404 and 405 may answer.
      errors = checkUnrouted(method, path, response.status, contentType, text);
    }
    if (errors.length > 0) {
      throw new Error(
        `The answer does not fit the OpenAPI document (${where}):\n${errors.join('\n')}\n${text}`,
      );
    }
    // The typed client reports a problem's own status: it must be the answer's.
    if (/^application\/problem\+json/.test(contentType ?? '')) {
      const { status } = JSON.parse(text) as { status?: unknown };
      if (status !== response.status)
        throw new Error(`The problem's status is not the answer's (${where}): ${text}`);
    }

    // Secrets: no hash and no password the suite ever sent may come back.
    if (leakPattern.test(text)) throw new Error(`A password or hash leaked (${where}): ${text}`);
    for (const password of passwords) {
      if (text.includes(password)) throw new Error(`A password leaked (${where}): ${text}`);
    }
    return new Response(text === '' ? null : text, { status: response.status, headers: response.headers });
  };

  const request = async <T>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<Reply<T>> => {
    const headers: Record<string, string> = { ...options.headers };
    let body: string | undefined = options.body;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      headers['content-type'] = 'application/json';
    }
    if (options.contentType !== undefined) headers['content-type'] = options.contentType;
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    const response = await checkedFetch(`${origin}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      text,
      body: (text === '' ? undefined : JSON.parse(text)) as T,
    };
  };

  return { origin, document, fetch: checkedFetch as typeof fetch, request };
}

/**
 * Two instances of the blog on one database, as a rolling deployment runs them: the first owns
 * the database (its close drops it), the second shares it. Both are closed after `run`.
 */
export async function withTwoInstances(
  engine: Engine,
  run: (first: BlogInstance, second: BlogInstance) => Promise<void>,
): Promise<void> {
  const first = await startBlog(engine);
  try {
    const second = await startBlog({
      ...engine,
      open: async () => ({ url: first.databaseUrl, drop: async () => undefined }),
    });
    try {
      await run(first, second);
    } finally {
      await second.close();
    }
  } finally {
    await first.close();
  }
}

/**
 * Starts the blog on a new database of `engine`, listening on 127.0.0.1 on a free port.
 * Auth routes get a high rate limit unless `options.authRateLimit` says otherwise: the whole
 * suite comes from one IP.
 */
export async function startBlog(engine: Engine, options: Partial<BlogOptions> = {}): Promise<BlogInstance> {
  const database = await engine.open();
  const admin = options.admin ?? {
    email: uniqueEmail('admin'),
    password: `admin-${randomBytes(6).toString('hex')}`,
  };
  const secret = options.jwtSecret ?? testSecret();
  const onServer = /^postgres(?:ql)?:/.test(database.url) && options.attachments === undefined;
  const settings: Partial<BlogOptions> = {
    databaseUrl: database.url,
    ...(onServer ? { attachmentsDirectory: attachmentsDirectoryOf(database.url) } : {}),
    jwtSecret: secret,
    production: false,
    // Sign-ups and logins by the hundred: the default cost (about 250 ms a hash) is the
    // password tests' to check (src/auth/password.test.ts), not every suite's to wait for.
    passwordCost: testPasswordCost,
    authRateLimit: 100_000,
    admin,
    ...options,
  };
  let started: RuntimeBlog;
  try {
    started = await startServing(database, settings);
  } catch (error) {
    await database.drop();
    throw error;
  }
  let connection: Connection;
  try {
    connection = await connect(started.origin, [admin.password]);
  } catch (error) {
    await started.stop();
    await database.drop();
    throw error;
  }
  // An in-memory PGlite is reachable only through the app's own handle, in this process.
  const inProcess = blogRuntime() === undefined ? database.database : undefined;
  return {
    ...connection,
    mail: started.mail,
    admin,
    secret,
    databaseUrl: database.url,
    settings,
    query: (sql, params) => queryDatabase(database.url, inProcess, sql, params),
    async close() {
      try {
        await started.stop();
      } finally {
        await database.drop();
      }
    },
  };
}

/** The blog listening on a free port: in this process, or on the runtime BLOG_RUNTIME names. */
async function startServing(
  database: Awaited<ReturnType<Engine['open']>>,
  settings: Partial<BlogOptions>,
): Promise<RuntimeBlog> {
  const runtime = blogRuntime();
  if (runtime !== undefined) {
    // The blog opens its own database there: an embedded one in its process, or the server's.
    await database.database?.close();
    return startOnRuntime(runtime, settings);
  }
  const mail: RuntimeBlog['mail'] = [];
  const mailer: Mailer = {
    async sendPasswordReset(message) {
      mail.push(message);
    },
  };
  const app: App<BlogContext> = await createBlogApp({
    ...(database.database === undefined ? {} : { database: database.database }),
    logger: false,
    mailer,
    ...settings,
  });
  try {
    const origin = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
    return { origin, mail, stop: () => app.close() };
  } catch (error) {
    await app.close();
    throw error;
  }
}

/** SQL on a blog's database: through the handle it was given, or a connection of its own to the server. */
async function queryDatabase<Row>(
  url: string,
  open: Database | undefined,
  sql: string,
  params: unknown[] = [],
): Promise<Row[]> {
  if (open !== undefined) return (await open.query<Row>(sql, params)).rows;
  if (!/^postgres(ql)?:\/\//.test(url))
    throw new Error(`The database at ${url} cannot be reached from the test`);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as Row[];
  } finally {
    await client.end();
  }
}

function collectPasswords(value: unknown, into: Set<string>): void {
  if (typeof value !== 'object' || value === null) return;
  for (const [key, item] of Object.entries(value)) {
    // Short test values ('x', 'short') would match innocent text; real passwords are 8+ long.
    if (key === 'password' && typeof item === 'string' && item.length >= 8) into.add(item);
    else collectPasswords(item, into);
  }
}

/**
 * Validates the answers to requests no operation documents (an unknown path, a method a path
 * does not have): they must be 404 `ROUTE_NOT_FOUND` or 405 `METHOD_NOT_ALLOWED`, shaped as the
 * document's `Problem`.
 */
function unroutedValidator(document: OpenApiDocument): ResponseValidator {
  const problem = { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } };
  return (method, path, status, contentType, body) => {
    if (status !== 404 && status !== 405) {
      return [`${method} ${path}: no operation is documented, yet the answer was ${status}`];
    }
    const code = status === 404 ? 'ROUTE_NOT_FOUND' : 'METHOD_NOT_ALLOWED';
    const pathOnly = path.split('?', 1)[0] ?? path;
    const synthetic = {
      ...document,
      paths: {
        [pathOnly]: {
          [method.toLowerCase()]: {
            operationId: 'unrouted',
            responses: { [String(status)]: { description: code, content: problem } },
          },
        },
      },
    } as unknown as OpenApiDocument;
    const errors = createResponseValidator(synthetic)(method, path, status, contentType, body);
    const parsed = typeof body === 'string' ? (JSON.parse(body) as Problem) : undefined;
    if (parsed?.code !== code) errors.push(`${method} ${path}: expected code ${code}, got ${parsed?.code}`);
    return errors;
  };
}

// ---------------------------------------------------------------------------------------------
// A suite's blog, with shortcuts

/** Where each procedure lives, `.rest()` overrides included. */
const manifest = routeManifest(api);

/** The blog of one `describe`: started before its tests, closed and dropped after them. */
export class Blog {
  #instance: BlogInstance | undefined;
  #adminToken: Promise<string> | undefined;

  constructor(
    readonly engine: Engine,
    readonly options: Partial<BlogOptions> = {},
  ) {}

  async start(): Promise<void> {
    this.#instance = await startBlog(this.engine, this.options);
  }

  async stop(): Promise<void> {
    await this.#instance?.close();
    this.#instance = undefined;
  }

  get instance(): BlogInstance {
    if (this.#instance === undefined) throw new Error('The blog is not started');
    return this.#instance;
  }

  get origin(): string {
    return this.instance.origin;
  }

  get mail(): BlogInstance['mail'] {
    return this.instance.mail;
  }

  /** The typed client, signed in as `token` when given; its answers are checked like any other. */
  client(token?: string): BlogClient {
    return createClient<typeof api, typeof blogErrors>({
      baseUrl: this.origin,
      routes: manifest,
      fetch: this.instance.fetch,
      ...(token === undefined ? {} : { token }),
    });
  }

  /** The first reset mail sent after `before` mails: sending happens after the 202, so wait for it. */
  async mailAfter(before: number): Promise<BlogInstance['mail'][number]> {
    const deadline = Date.now() + 5000;
    while (this.mail.length <= before) {
      if (Date.now() > deadline) throw new Error('No reset mail arrived within 5 s');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return this.mail[before]!;
  }

  request<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<Reply<T>> {
    return this.instance.request<T>(method, path, options);
  }

  /** SQL on the blog's database (see {@link BlogInstance.query}). */
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]> {
    return this.instance.query<Row>(sql, params);
  }

  get<T = unknown>(path: string, token?: string): Promise<Reply<T>> {
    return this.request<T>('GET', path, token === undefined ? {} : { token });
  }

  post<T = unknown>(path: string, json?: unknown, token?: string): Promise<Reply<T>> {
    return this.request<T>('POST', path, {
      ...(json === undefined ? {} : { json }),
      ...(token === undefined ? {} : { token }),
    });
  }

  put<T = unknown>(path: string, json: unknown, token?: string): Promise<Reply<T>> {
    return this.request<T>('PUT', path, { json, ...(token === undefined ? {} : { token }) });
  }

  delete<T = unknown>(path: string, token?: string): Promise<Reply<T>> {
    return this.request<T>('DELETE', path, token === undefined ? {} : { token });
  }

  /** Registers a new user; returns the session and the credentials. */
  async register(
    fields: { name?: string; email?: string; password?: string } = {},
  ): Promise<Session & { email: string; password: string }> {
    const email = fields.email ?? uniqueEmail();
    const password = fields.password ?? `pw-${randomBytes(6).toString('hex')}`;
    const session = await this.client().auth.register({ email, password, name: fields.name ?? 'Test User' });
    return { ...session, email, password };
  }

  /** Asserts that a session is over: its access token and its refresh token are both refused. */
  async expectSignedOut(session: Pick<Session, 'accessToken' | 'refreshToken'>): Promise<void> {
    await expectClientProblem(this.client(session.accessToken).auth.me(), 401, 'INVALID_TOKEN');
    await expectClientProblem(
      this.client().auth.refresh({ refreshToken: session.refreshToken }),
      401,
      'INVALID_TOKEN',
    );
  }

  /** Logs in. */
  login(email: string, password: string): Promise<Session> {
    return this.client().auth.login({ email, password });
  }

  /** An access token of the seeded admin (one login per suite). */
  adminToken(): Promise<string> {
    this.#adminToken ??= this.login(this.instance.admin.email, this.instance.admin.password).then(
      (session) => session.accessToken,
    );
    return this.#adminToken;
  }

  /** Creates a post as `token`. */
  createPost(
    token: string,
    fields: { title?: string; content?: string; excerpt?: string; status?: 'draft' | 'published' } = {},
  ): Promise<PostAuthenticated> {
    return this.client(token).posts.createPost({
      title: 'A title',
      content: 'Some content for the post.',
      ...fields,
    });
  }
}

/** A blog for the enclosing `describe`: started in `beforeAll`, closed in `afterAll`. */
export function useBlog(engine: Engine, options: Partial<BlogOptions> = {}): Blog {
  const blog = new Blog(engine, options);
  beforeAll(() => blog.start());
  afterAll(() => blog.stop());
  return blog;
}

/** A compact JWT signed with HMAC-SHA256 (or `none`), to forge tokens the app must refuse. */
export function signJwt(
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  secret: string,
): string {
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const unsigned = `${encode(header)}.${encode(payload)}`;
  const algorithm = header.alg === 'HS512' ? 'sha512' : 'sha256';
  const signature =
    header.alg === 'none' ? '' : createHmac(algorithm, secret).update(unsigned).digest('base64url');
  return `${unsigned}.${signature}`;
}

/** The claims of a JWT, unverified. */
export function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;
}

/** Asserts a problem+json answer: status, code, the headers of its kind and, when given, the detail. */
export function expectProblem(
  reply: Reply<unknown>,
  status: number,
  code: string,
  detail?: string | RegExp,
): Problem {
  expect(reply.status, reply.text).toBe(status);
  return expectProblemBody(reply, status, code, detail);
}

/**
 * Awaits a typed client call that must fail, and asserts what `expectProblem` asserts of a raw
 * answer; returns the `ProblemError` for its field errors and headers.
 */
export async function expectClientProblem(
  call: Promise<unknown>,
  status: number,
  code: string,
  detail?: string | RegExp,
): Promise<ProblemError> {
  const failure = await call.then(
    (value) => expect.fail(`Expected ${status} ${code}, the call answered ${JSON.stringify(value)}`),
    (error: unknown) => error,
  );
  expect(failure, String(failure)).toBeInstanceOf(ProblemError);
  const problem = failure as ProblemError;
  // The checked fetch ties a problem's status to the HTTP status: this is the answer's.
  expect(problem.status, problem.detail).toBe(status);
  const body = problem.problem;
  expectProblemBody({ headers: problem.headers, body, text: JSON.stringify(body) }, status, code, detail);
  return problem;
}

function expectProblemBody(
  reply: Omit<Reply<unknown>, 'status'>,
  status: number,
  code: string,
  detail: string | RegExp | undefined,
): Problem {
  const problem = reply.body as Problem;
  expect(reply.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(problem).toMatchObject({ status, code });
  expect(typeof problem.type).toBe('string');
  expect(typeof problem.title).toBe('string');
  if (typeof detail === 'string') expect(problem.detail).toBe(detail);
  else if (detail !== undefined) expect(problem.detail).toMatch(detail);
  if (status === 401) expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
  // No stack or internal path in any error.
  expect(reply.text).not.toMatch(/\bat .+\.(ts|js):\d+|node_modules|\/work\//);
  return problem;
}
