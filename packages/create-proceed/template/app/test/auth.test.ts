import { describe, expect, it } from 'vitest';
import { client } from './client.js';
import { engines, useApp } from './databases.js';

describe.each(engines)('auth on $name', (engine) => {
  if (engine.skip) {
    it.skip('needs TEST_DATABASE_URL', () => {});
    return;
  }
  const served = useApp(engine);
  const anonymous = () => client(served.origin);
  const as = (token: string) => client(served.origin, token);

  it('registers, tells who is signed in, and refuses a second account with the same email', async () => {
    const session = await anonymous().auth.register({
      email: 'Ada@Example.com',
      password: 'correct horse',
      name: 'Ada',
    });
    expect(session).toMatchObject({ tokenType: 'Bearer', expiresIn: 900 });
    expect(session.user).toEqual({
      id: session.user.id,
      name: 'Ada',
      email: 'ada@example.com',
      role: 'user',
    });
    expect(await as(session.accessToken).auth.me()).toEqual(session.user);

    await expect(
      anonymous().auth.register({ email: 'ada@example.COM', password: 'another one', name: 'Ada 2' }),
    ).rejects.toMatchObject({ status: 409, code: 'CONFLICT' });
    await expect(
      anonymous().auth.register({ email: 'not an email', password: 'short', name: '' }),
    ).rejects.toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
    await expect(anonymous().auth.me()).rejects.toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
  });

  it('logs in with the password only, and refreshes once per refresh token', async () => {
    await anonymous().auth.register({ email: 'grace@example.com', password: 'correct horse', name: 'Grace' });
    await expect(
      anonymous().auth.login({ email: 'grace@example.com', password: 'wrong horse' }),
    ).rejects.toMatchObject({ status: 401, code: 'UNAUTHENTICATED', detail: 'Invalid email or password' });
    await expect(
      anonymous().auth.login({ email: 'nobody@example.com', password: 'correct horse' }),
    ).rejects.toMatchObject({ status: 401, code: 'UNAUTHENTICATED', detail: 'Invalid email or password' });

    const login = await anonymous().auth.login({ email: 'GRACE@example.com', password: 'correct horse' });
    expect(login.user.name).toBe('Grace');
    const refreshed = await anonymous().auth.refresh({ refreshToken: login.refreshToken });
    expect(refreshed.user).toEqual(login.user);
    expect(await as(refreshed.accessToken).auth.me()).toEqual(login.user);

    // A refresh token sent twice was copied: that whole login ends, the new pair included.
    await expect(anonymous().auth.refresh({ refreshToken: login.refreshToken })).rejects.toMatchObject({
      status: 401,
      code: 'INVALID_TOKEN',
    });
    await expect(as(refreshed.accessToken).auth.me()).rejects.toMatchObject({ status: 401 });
  });

  it('logs out: the access token and its refresh token stop working, other logins do not', async () => {
    const first = await anonymous().auth.register({
      email: 'linus@example.com',
      password: 'correct horse',
      name: 'Linus',
    });
    const second = await anonymous().auth.login({ email: 'linus@example.com', password: 'correct horse' });
    expect(await as(first.accessToken).auth.logout()).toEqual({ success: true });
    await expect(as(first.accessToken).auth.me()).rejects.toMatchObject({
      status: 401,
      code: 'INVALID_TOKEN',
      detail: 'jwt revoked',
    });
    await expect(anonymous().auth.refresh({ refreshToken: first.refreshToken })).rejects.toMatchObject({
      status: 401,
    });
    expect((await as(second.accessToken).auth.me()).name).toBe('Linus');
    await expect(anonymous().auth.logout()).rejects.toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
  });

  it('changes the password: the old one and every other session stop working, this one gets a new pair', async () => {
    const first = await anonymous().auth.register({
      email: 'ken@example.com',
      password: 'correct horse',
      name: 'Ken',
    });
    const other = await anonymous().auth.login({ email: 'ken@example.com', password: 'correct horse' });
    await expect(
      as(first.accessToken).auth.changePassword({
        currentPassword: 'wrong horse',
        newPassword: 'battery staple',
      }),
    ).rejects.toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });

    const changed = await as(first.accessToken).auth.changePassword({
      currentPassword: 'correct horse',
      newPassword: 'battery staple',
    });
    expect(changed.user.email).toBe('ken@example.com');
    expect((await as(changed.accessToken).auth.me()).name).toBe('Ken');
    await expect(as(other.accessToken).auth.me()).rejects.toMatchObject({
      status: 401,
      code: 'INVALID_TOKEN',
    });
    await expect(anonymous().auth.refresh({ refreshToken: other.refreshToken })).rejects.toMatchObject({
      status: 401,
    });
    await expect(
      anonymous().auth.login({ email: 'ken@example.com', password: 'correct horse' }),
    ).rejects.toMatchObject({ status: 401 });
    expect(
      (await anonymous().auth.login({ email: 'ken@example.com', password: 'battery staple' })).user.name,
    ).toBe('Ken');
  });
});
