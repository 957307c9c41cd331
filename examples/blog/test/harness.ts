/**
 * The blog's end-to-end harness. Each suite starts the real app on a real socket, on an
 * in-memory PGlite or on a fresh PostgreSQL database made for it (and dropped after it), and
 * talks to it with `fetch`. Every exchange goes through one function that checks the answer
 * against the app's own OpenAPI document and looks for leaked passwords and hashes, so no test
 * can receive an undocumented or leaky response without failing.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { App } from 'proceedjs';
import { createResponseValidator, type OpenApiDocument, type ResponseValidator } from 'proceedjs/openapi';
import { afterAll, beforeAll, expect, inject } from 'vitest';
import { createScratchDatabase } from '../../../test/postgres.js';
import { type BlogOptions, createBlogApp } from '../src/app.js';
import type { BlogContext } from '../src/context.js';
import { type Database, openDatabase } from '../src/db/index.js';
import type { Mailer } from '../src/mailer.js';

// ---------------------------------------------------------------------------------------------
// Engines

export interface Engine {
  name: 'PGlite' | 'PostgreSQL';
  /** No PostgreSQL server reachable: the suite is skipped (CI already fails in the global setup). */
  skip: boolean;
  /** A new empty database for one app (open already, or at `url`); `drop` removes it. */
  open(): Promise<{ url: string; database?: Database; drop(): Promise<void> }>;
}

/** Creates `blog_test_<random>` through an admin connection to `adminUrl`. */
export function createPostgresDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  return createScratchDatabase(adminUrl, 'blog_test');
}

/** The engines every shared suite runs on. */
export function engines(): Engine[] {
  const postgresUrl = inject('postgresUrl');
  return [
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
}

// ---------------------------------------------------------------------------------------------
// Views and bodies

export const views = {
  userPublic: ['id', 'name'],
  userAuthenticated: ['email', 'id', 'name', 'role'],
  userAdmin: ['createdAt', 'email', 'id', 'isActive', 'name', 'role', 'updatedAt'],
  postPublic: ['excerpt', 'id', 'title'],
  postAuthenticated: ['authorId', 'content', 'excerpt', 'id', 'status', 'title'],
} as const;

export interface UserView {
  id: string;
  name: string;
  email?: string;
  role?: 'admin' | 'user' | 'guest';
  isActive?: boolean;
  createdAt?: string;
  updatedAt?: string;
}

export interface PostView {
  id: string;
  title: string;
  excerpt: string;
  content?: string;
  authorId?: string;
  status?: 'draft' | 'published' | 'archived';
}

export interface Session {
  user: UserView;
  accessToken: string;
  refreshToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
}

export interface CursorPage<T> {
  data: T[];
  nextCursor: string | null;
  prevCursor: string | null;
}

export interface OffsetPage<T> {
  data: T[];
  meta: { page: number; limit: number; total: number; totalPages: number };
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: { path: string; message: string }[];
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

/** A client of a running blog whose every exchange is checked (conformance and leaks). */
export interface Client {
  origin: string;
  document: OpenApiDocument;
  request<T = unknown>(method: string, path: string, options?: RequestOptions): Promise<Reply<T>>;
}

export interface BlogInstance extends Client {
  app: App<BlogContext>;
  /** Every reset mail the app sent. */
  mail: { to: string; name: string; token: string; expiresAt: Date }[];
  admin: { email: string; password: string };
  /** The JWT secret the app signs with (to forge tokens in attack tests). */
  secret: string;
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

/**
 * Connects to a blog at `origin`: reads its OpenAPI document and returns a `request` that checks
 * every answer against it and against leaks of `knownPasswords` and of any password it sends.
 */
export async function connect(origin: string, knownPasswords: readonly string[] = []): Promise<Client> {
  const document = (await (await fetch(`${origin}/api/docs/json`)).json()) as OpenApiDocument;
  const check = createResponseValidator(document);
  const checkUnrouted = unroutedValidator(document);
  const passwords = new Set<string>(knownPasswords);

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
      collectPasswords(options.json, passwords);
    }
    if (options.contentType !== undefined) headers['content-type'] = options.contentType;
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    const response = await fetch(`${origin}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
    });
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

    // Secrets: no hash and no password the suite ever sent may come back.
    if (leakPattern.test(text)) throw new Error(`A password or hash leaked (${where}): ${text}`);
    for (const password of passwords) {
      if (text.includes(password)) throw new Error(`A password leaked (${where}): ${text}`);
    }

    return {
      status: response.status,
      headers: response.headers,
      text,
      body: (text === '' ? undefined : JSON.parse(text)) as T,
    };
  };

  return { origin, document, request };
}

/**
 * Starts the blog on a new database of `engine`, listening on 127.0.0.1 on a free port.
 * Auth routes get a high rate limit unless `options.authRateLimit` says otherwise: the whole
 * suite comes from one IP.
 */
export async function startBlog(engine: Engine, options: Partial<BlogOptions> = {}): Promise<BlogInstance> {
  const database = await engine.open();
  const mail: BlogInstance['mail'] = [];
  const mailer: Mailer = {
    async sendPasswordReset(message) {
      mail.push(message);
    },
  };
  const admin = options.admin ?? {
    email: uniqueEmail('admin'),
    password: `admin-${randomBytes(6).toString('hex')}`,
  };
  const secret = options.jwtSecret ?? testSecret();
  let app: App<BlogContext>;
  try {
    app = await createBlogApp({
      databaseUrl: database.url,
      ...(database.database === undefined ? {} : { database: database.database }),
      jwtSecret: secret,
      production: false,
      authRateLimit: 100_000,
      logger: false,
      mailer,
      admin,
      ...options,
    });
  } catch (error) {
    await database.drop();
    throw error;
  }
  let client: Client;
  try {
    const origin = await app.listen({ port: 0, host: '127.0.0.1', handleSignals: false });
    client = await connect(origin, [admin.password]);
  } catch (error) {
    await app.close();
    await database.drop();
    throw error;
  }
  const { origin, document, request } = client;

  return {
    app,
    origin,
    document,
    mail,
    admin,
    secret,
    request,
    async close() {
      try {
        await app.close();
      } finally {
        await database.drop();
      }
    },
  };
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

  /** Registers a new user (201 asserted); returns the session and the credentials. */
  async register(
    fields: { name?: string; email?: string; password?: string } = {},
  ): Promise<Session & { email: string; password: string }> {
    const email = fields.email ?? uniqueEmail();
    const password = fields.password ?? `pw-${randomBytes(6).toString('hex')}`;
    const reply = await this.post<Session>('/api/auth/register', {
      email,
      password,
      name: fields.name ?? 'Test User',
    });
    expect(reply.status, reply.text).toBe(201);
    return { ...reply.body, email, password };
  }

  /** Asserts that a session is over: its access token and its refresh token are both refused. */
  async expectSignedOut(session: Pick<Session, 'accessToken' | 'refreshToken'>): Promise<void> {
    expectProblem(await this.get('/api/auth/me', session.accessToken), 401, 'INVALID_TOKEN');
    expectProblem(
      await this.post('/api/auth/refresh', { refreshToken: session.refreshToken }),
      401,
      'INVALID_TOKEN',
    );
  }

  /** Logs in (200 asserted). */
  async login(email: string, password: string): Promise<Session> {
    const reply = await this.post<Session>('/api/auth/login', { email, password });
    expect(reply.status, reply.text).toBe(200);
    return reply.body;
  }

  /** An access token of the seeded admin (one login per suite). */
  adminToken(): Promise<string> {
    this.#adminToken ??= this.login(this.instance.admin.email, this.instance.admin.password).then(
      (session) => session.accessToken,
    );
    return this.#adminToken;
  }

  /** Creates a post as `token` (201 asserted). */
  async createPost(
    token: string,
    fields: { title?: string; content?: string; excerpt?: string; status?: 'draft' | 'published' } = {},
  ): Promise<Required<PostView>> {
    const reply = await this.post<Required<PostView>>(
      '/api/posts',
      { title: 'A title', content: 'Some content for the post.', ...fields },
      token,
    );
    expect(reply.status, reply.text).toBe(201);
    return reply.body;
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
  const problem = reply.body as Problem;
  expect(reply.status, reply.text).toBe(status);
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
