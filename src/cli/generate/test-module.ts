/**
 * The test `proceed generate resource` writes (test/<collection>.test.ts), and the sample values
 * it and the seed use: pure functions of the names and the fields.
 */
import { type Field, GenerateError, type ResourceNames } from './fields.js';
import { a, listed, lower, sample, words } from './render.js';

/** An object literal of every field's first or second sample. */
export function sampleObject(fields: readonly Field[], which: 0 | 1): string {
  // Outside the generated test there is no ada: a reference reads as some user's id.
  const value = (field: Field) =>
    field.references !== undefined
      ? 'user.id'
      : field.values !== undefined
        ? `'${field.values[which]}'`
        : sample(field, which);
  return `{ ${fields.map((field) => `${field.name}: ${value(field)}`).join(', ')} }`;
}

/** test/<collection>.test.ts: the CRUD through the typed client, on each database engine. */
export function testModule(names: ResourceNames, fields: readonly Field[]): string {
  const { collection, resource, plural } = names;
  const one = lower(resource);
  const label = words(one).trim();
  const head = fields[0];
  if (head === undefined) throw new GenerateError('No fields given');
  const required = fields.find((field) => !field.optional && field.references === undefined);
  const reference = fields.find((field) => field.references !== undefined);
  const choice = fields.find((field) => field.values !== undefined);
  const above = (levels: readonly Field['level'][]) => fields.filter((field) => levels.includes(field.level));
  const strip = (name: string, what: string, hidden: readonly Field[]) =>
    hidden.length === 0
      ? ''
      : `
  /** What ${what} of ${a(label)}. */
  const ${name} = (${listed('{ ', [...hidden.map((field) => `${field.name}: _${field.name}`), '...shown'], ' }', 2)}: Written) =>
    shown;`;
  // What each caller sees of what was written, when some field is hidden from them.
  const viewsOf = `${strip('publicOf', 'everyone sees', above(['owner', 'admin']))}${strip('ownerOf', 'its owner sees', above(['admin']))}`;
  const publicOf =
    above(['owner', 'admin']).length === 0 ? (x: string) => x : (x: string) => `publicOf(${x})`;
  const ownerOf = above(['admin']).length === 0 ? (x: string) => x : (x: string) => `ownerOf(${x})`;
  const object = (which: 0 | 1) =>
    listed(
      '({ ',
      fields.map((field) => `${field.name}: ${sample(field, which)}`),
      ' })',
      2,
    );
  const extraTests = [
    required === undefined
      ? ''
      : `
  it('answers 400 to ${a(label)} without its ${required.name}', async () => {
    const { ${required.name}: _left, ...rest } = first();
    // @ts-expect-error: ${required.name} is required, by the types and by the server.
    await expect(ada.api.${collection}.create${resource}(rest)).rejects.toMatchObject({
      status: 400,
      code: 'VALIDATION_FAILED',
      errors: [expect.objectContaining({ path: '${required.name}' })],
    });
  });
`,
    choice === undefined
      ? ''
      : `
  it('answers 400 to a ${choice.name} it does not list', async () => {
    const written = { ...first(), ${choice.name}: 'something else' };
    // @ts-expect-error: ${choice.name} is one of ${(choice.values ?? []).join(', ')}.
    await expect(ada.api.${collection}.create${resource}(written)).rejects.toMatchObject({
      status: 400,
      errors: [expect.objectContaining({ path: '${choice.name}' })],
    });
  });
`,
    reference === undefined
      ? ''
      : `
  it('answers 400 to ${a(label)} naming a user that does not exist, and writes nothing', async () => {
    const nobody = '00000000-0000-7000-8000-000000000000';
    await expect(
      ada.api.${collection}.create${resource}({ ...first(), ${reference.name}: nobody }),
    ).rejects.toMatchObject({
      status: 400,
      errors: [{ path: '${reference.name}', message: 'No user with this id' }],
    });
  });
`,
  ].join('');
  return `import { eq } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';
import { users } from '../src/schema.js';
import { client } from './client.js';
import { engines, useApp } from './databases.js';

describe.each(engines)('${collection} on $name', (engine) => {
  if (engine.skip) {
    it.skip('needs TEST_DATABASE_URL', () => {});
    return;
  }
  const served = useApp(engine);
  const anonymous = () => client(served.origin);
  const signUp = async (name: string) => {
    const { accessToken, user } = await anonymous().auth.register({
      email: \`\${name}@example.com\`,
      password: 'correct horse',
      name,
    });
    return { id: user.id, api: client(served.origin, accessToken) };
  };
  let ada: Awaited<ReturnType<typeof signUp>>;
  let bob: Awaited<ReturnType<typeof signUp>>;
  let admin: Awaited<ReturnType<typeof signUp>>;
  beforeAll(async () => {
    [ada, bob, admin] = [await signUp('ada'), await signUp('bob'), await signUp('admin')];
    // No route makes an admin: the database does.
    await served.database.db.update(users).set({ role: 'admin' }).where(eq(users.id, admin.id));
  });

  /** What the tests write: the fields of two ${collection}. */
  const first = () => ${object(0)};
  const second = () => ${object(1)};${viewsOf === '' ? '' : '\n  type Written = ReturnType<typeof first>;'}${viewsOf}

  it('creates, reads, updates and deletes ${a(label)}, its owner or an admin only', async () => {
    const created = await ada.api.${collection}.create${resource}(first());
    expect(created).toMatchObject(${ownerOf('first()')});
    const { id } = created;
    // Each caller sees the ${label} in their view of it: more for its owner, every field for admins.
    expect(await anonymous().${collection}.get${resource}({ id })).toEqual({ id, ...${publicOf('first()')} });
    expect(await bob.api.${collection}.get${resource}({ id })).toEqual({ id, ...${publicOf('first()')} });
    const own = await ada.api.${collection}.get${resource}({ id });
    expect(own).toMatchObject({ createdAt: expect.any(String), updatedAt: expect.any(String) });
    expect(own).not.toHaveProperty('ownerId');
    expect(await admin.api.${collection}.get${resource}({ id })).toMatchObject({ ownerId: ada.id });

    const change = { id, data: second() };
    await expect(bob.api.${collection}.update${resource}(change)).rejects.toMatchObject({
      status: 403,
      code: 'FORBIDDEN',
    });
    await expect(anonymous().${collection}.update${resource}(change)).rejects.toMatchObject({
      status: 401,
      code: 'UNAUTHENTICATED',
    });
    // Nothing to change is refused: it would only move updatedAt.
    await expect(ada.api.${collection}.update${resource}({ id, data: {} })).rejects.toMatchObject({
      status: 400,
      code: 'VALIDATION_FAILED',
    });
    expect(await ada.api.${collection}.update${resource}(change)).toMatchObject(${ownerOf('second()')});
    const moderation = { ${head.name}: ${sample(head, 0)} };
    const moderated = await admin.api.${collection}.update${resource}({ id, data: moderation });
    expect(moderated).toMatchObject({ ...second(), ...moderation });

    await expect(bob.api.${collection}.delete${resource}({ id })).rejects.toMatchObject({ status: 403 });
    expect(await ada.api.${collection}.delete${resource}({ id })).toEqual({ success: true });
    await expect(anonymous().${collection}.get${resource}({ id })).rejects.toMatchObject({
      status: 404,
      code: 'NOT_FOUND',
    });
    await expect(ada.api.${collection}.delete${resource}({ id })).rejects.toMatchObject({ status: 404 });
  });

  it('lists newest first, a cursor page at a time, each ${label} in its caller\\'s view', async () => {
    const made: string[] = [];
    for (let count = 0; count < 5; count++)
      made.unshift((await bob.api.${collection}.create${resource}(first())).id);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await bob.api.${collection}.list${plural}(cursor === undefined ? { limit: 2 } : { limit: 2, cursor });
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((${one}) => ${one}.id));
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.slice(0, 5)).toEqual(made);
    // Bob's own ${collection} in his view, with their dates; ada sees them without.
    const [newest] = (await ada.api.${collection}.list${plural}({ limit: 1 })).data;
    expect(newest).toEqual({ id: made[0], ...${publicOf('first()')} });
    expect((await bob.api.${collection}.list${plural}({ limit: 1 })).data[0]).toHaveProperty('createdAt');
  });
${extraTests}});
`;
}
