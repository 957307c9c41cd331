/**
 * The blog's procedures as MCP tools (docs/mcp.md), through the SDK's own client: what each
 * caller is shown, and that a call answers as the REST route does for the same caller.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { engines, useBlog } from './harness.js';

const postTools = [
  'listPosts',
  'getPost',
  'createPost',
  'updatePost',
  'deletePost',
  'publishPost',
  'archivePost',
];
const userTools = ['listUsers', 'getUser', 'createUser', 'updateUser', 'deleteUser'];

/** A refused call's problem: the result's text, never `structuredContent` (docs/mcp.md). */
function problemIn(result: unknown): Record<string, unknown> {
  const { isError, structuredContent, content } = result as {
    isError?: boolean;
    structuredContent?: unknown;
    content: Array<{ text: string }>;
  };
  expect(isError).toBe(true);
  expect(structuredContent).toBeUndefined();
  return JSON.parse(content[0]?.text ?? 'null') as Record<string, unknown>;
}

for (const engine of engines()) {
  describe.skipIf(engine.skip)(`the MCP endpoint on ${engine.name}`, () => {
    const blog = useBlog(engine);

    const connect = async (token?: string) => {
      const client = new Client({ name: 'blog-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL('/mcp', blog.origin), {
          ...(token === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
        }),
      );
      return client;
    };
    const withClient = async <T>(token: string | undefined, use: (client: Client) => Promise<T>) => {
      const client = await connect(token);
      try {
        return await use(client);
      } finally {
        await client.close();
      }
    };
    const toolNames = (token?: string) =>
      withClient(token, async (client) => (await client.listTools()).tools.map((tool) => tool.name).sort());

    it('shows anonymous callers the public tools, a user also those that need one, an admin all', async () => {
      const user = await blog.register();
      const anonymous = await toolNames();
      // A user's public view is anyone's to read, as GET /api/users/:id is.
      expect(anonymous).toEqual(['getPost', 'getUser', 'listPosts']);
      const signedIn = await toolNames(user.accessToken);
      // updateUser's guard (self or admin) reads the path: a user may call it on themselves.
      expect(signedIn).toEqual([...postTools, 'getUser', 'updateUser'].sort());
      expect(await toolNames(await blog.adminToken())).toEqual([...postTools, ...userTools].sort());
    });

    it("tells an agent nothing of HTTP it cannot send (the REST docs' ETag, If-Match, Idempotency-Key, query strings)", async () => {
      const tools = await withClient(
        await blog.adminToken(),
        async (client) => (await client.listTools()).tools,
      );
      for (const tool of tools)
        expect(tool.description ?? '').not.toMatch(/ETag|If-Match|Idempotency-Key|\w=\w/);
      expect(tools.find((tool) => tool.name === 'getPost')?.description).toBe(
        'A post; one you may not see is not found (404).',
      );
    });

    it("answers a user's call as the REST route answers that user: never a field of another view", async () => {
      const author = await blog.register();
      const reader = await blog.register();
      const post = await blog.createPost(author.accessToken, {
        status: 'published',
        title: 'Seen by agents',
      });
      for (const token of [undefined, reader.accessToken, author.accessToken, await blog.adminToken()]) {
        const called = await withClient(token, (client) =>
          client.callTool({ name: 'getPost', arguments: { id: post.id } }),
        );
        const rest = await blog.get(`/api/posts/${post.id}`, token);
        expect(called.isError).toBeUndefined();
        expect(called.structuredContent).toEqual(rest.body);
      }
      const asAdmin = await withClient(await blog.adminToken(), (client) =>
        client.callTool({ name: 'getUser', arguments: { id: author.user.id } }),
      );
      const restAsAdmin = await blog.get(`/api/users/${author.user.id}`, await blog.adminToken());
      expect(asAdmin.structuredContent).toEqual(restAsAdmin.body);
      // An admin's list holds the admin view (emails, roles): the same as the admin's REST list.
      const adminToken = await blog.adminToken();
      const search = { search: author.email };
      const adminList = await withClient(adminToken, (client) =>
        client.callTool({ name: 'listUsers', arguments: search }),
      );
      const restAdminList = await blog.get(
        `/api/users?search=${encodeURIComponent(author.email)}`,
        adminToken,
      );
      expect(adminList.structuredContent).toEqual(restAdminList.body);
      expect(JSON.stringify(adminList)).toContain(author.email);
      // The same user as another user reads it: the public view, as over REST, without the email.
      const asReader = await withClient(reader.accessToken, (client) =>
        client.callTool({ name: 'getUser', arguments: { id: author.user.id } }),
      );
      const restAsReader = await blog.get(`/api/users/${author.user.id}`, reader.accessToken);
      expect(asReader.structuredContent).toEqual(restAsReader.body);
      expect(JSON.stringify(asReader)).not.toContain(author.email);
      const listed = await withClient(reader.accessToken, (client) =>
        client.callTool({ name: 'listUsers', arguments: {} }),
      );
      expect(problemIn(listed)).toMatchObject({ status: 403, code: 'FORBIDDEN' });
    });

    it('creates through a tool as through POST, the caller its author, and refuses bad input as a result', async () => {
      const author = await blog.register();
      const created = await withClient(author.accessToken, (client) =>
        client.callTool({
          name: 'createPost',
          arguments: { title: 'From an agent', content: 'Written by a tool.' },
        }),
      );
      expect(created.structuredContent).toMatchObject({ title: 'From an agent', authorId: author.user.id });
      // Listed first, as agents do: the SDK then checks each result against the tool's outputSchema.
      const invalid = await withClient(author.accessToken, async (client) => {
        await client.listTools();
        return client.callTool({ name: 'createPost', arguments: { title: '' } });
      });
      expect(problemIn(invalid)).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    });

    it('answers a call that needs a user, without one, with 401 naming its protected-resource metadata', async () => {
      const answer = await fetch(new URL('/mcp', blog.origin), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'createPost', arguments: { title: 'x', content: 'y' } },
        }),
      });
      expect(answer.status).toBe(401);
      const metadataUrl = `${blog.origin}/.well-known/oauth-protected-resource`;
      expect(answer.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${metadataUrl}"`);
      const metadata = (await (await fetch(metadataUrl)).json()) as Record<string, unknown>;
      expect(metadata).toEqual({
        resource: `${blog.origin}/mcp`,
        authorization_servers: [blog.origin],
        bearer_methods_supported: ['header'],
      });
    });
  });
}
