/**
 * Password hashing with scrypt (node:crypto, no native add-on). A hash is one self-describing
 * string, `scrypt$N$r$p$salt$hash`, so the cost can be raised later without a migration:
 * {@link needsRehash} tells when a stored hash is weaker than the current setting.
 */
import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';

/** scrypt cost parameters. */
export interface ScryptCost {
  /** CPU/memory cost, a power of two. Default 16384 (2^14). */
  N?: number;
  /** Block size. Default 8. */
  r?: number;
  /** Parallelism, run one after another: it multiplies the time, not the memory. Default 5. */
  p?: number;
}

// OWASP's minimum for scrypt, in the variant that keeps 16 MiB a hash: a server hashing on
// Node's four pool threads at once needs 64 MiB, where the N = 2^17 variant needs 512
// (docs/auth.md, "Passwords").
const defaults = { N: 16384, r: 8, p: 5 } as const;
const saltBytes = 16;
const keyBytes = 32;
const prefix = 'scrypt';

function derive(password: string, salt: Buffer, cost: Required<ScryptCost>): Promise<Buffer> {
  const options: ScryptOptions = {
    N: cost.N,
    r: cost.r,
    p: cost.p,
    // Node's default cap (32 MiB) is below what N = 2^15 needs; allow twice the real need.
    maxmem: 256 * cost.N * cost.r + 1024 * 1024,
  };
  // NFKC (NIST SP 800-63B): the same password typed on two keyboards hashes the same.
  const normalized = password.normalize('NFKC');
  return new Promise((resolve, reject) => {
    scrypt(normalized, salt, keyBytes, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** The cost with its defaults, checked (a RangeError names what is wrong). */
export function costOf(options: ScryptCost): Required<ScryptCost> {
  const cost = { N: options.N ?? defaults.N, r: options.r ?? defaults.r, p: options.p ?? defaults.p };
  checkCost(cost);
  return cost;
}

function checkCost(cost: Required<ScryptCost>): void {
  const { N, r, p } = cost;
  const powerOfTwo = Number.isInteger(N) && N >= 2 && (N & (N - 1)) === 0;
  if (!powerOfTwo || N > 2 ** 20)
    throw new RangeError(`scrypt N must be a power of two up to 2^20 (got ${N})`);
  if (!Number.isInteger(r) || r < 1 || r > 32) throw new RangeError(`scrypt r must be 1–32 (got ${r})`);
  if (!Number.isInteger(p) || p < 1 || p > 16) throw new RangeError(`scrypt p must be 1–16 (got ${p})`);
}

interface ParsedHash {
  cost: Required<ScryptCost>;
  salt: Buffer;
  key: Buffer;
}

const base64url = /^[A-Za-z0-9_-]+$/;

function parse(encoded: string): ParsedHash {
  const parts = encoded.split('$');
  const [name, n, r, p, salt, key] = parts;
  if (
    parts.length !== 6 ||
    name !== prefix ||
    salt === undefined ||
    key === undefined ||
    !base64url.test(salt) ||
    !base64url.test(key)
  ) {
    throw new TypeError('Not a password hash made by hashPassword() (expected scrypt$N$r$p$salt$hash)');
  }
  const cost = { N: Number(n), r: Number(r), p: Number(p) };
  checkCost(cost);
  return { cost, salt: Buffer.from(salt, 'base64url'), key: Buffer.from(key, 'base64url') };
}

/**
 * Hashes a password with a fresh 16-byte salt. About 250 ms and 16 MiB with the default cost.
 *
 * @example
 * const passwordHash = await hashPassword(input.password);
 * // 'scrypt$16384$8$5$<salt>$<hash>'
 */
export async function hashPassword(password: string, cost: ScryptCost = {}): Promise<string> {
  const settled = costOf(cost);
  const salt = randomBytes(saltBytes);
  const key = await derive(password, salt, settled);
  return [
    prefix,
    settled.N,
    settled.r,
    settled.p,
    salt.toString('base64url'),
    key.toString('base64url'),
  ].join('$');
}

/**
 * Checks a password against a stored hash in constant time. Throws a TypeError when the stored
 * value is not a hash made by {@link hashPassword} (that is a data bug, not a wrong password).
 *
 * @example
 * if (!(await verifyPassword(user.passwordHash, input.password))) throw invalidCredentials();
 */
export async function verifyPassword(encoded: string, password: string): Promise<boolean> {
  const { cost, salt, key } = parse(encoded);
  const candidate = await derive(password, salt, cost);
  return candidate.length === key.length && timingSafeEqual(candidate, key);
}

/**
 * Spends what a {@link verifyPassword} with the given cost spends, and answers false. Call it
 * when there is no user, so that an unknown email is as slow as a wrong password.
 *
 * @example
 * if (user === undefined) { await dummyVerify(input.password); throw invalidCredentials(); }
 */
export async function dummyVerify(password: string, cost: ScryptCost = {}): Promise<false> {
  const expected = randomBytes(keyBytes);
  const candidate = await derive(password, randomBytes(saltBytes), costOf(cost));
  timingSafeEqual(candidate, expected);
  return false;
}

/**
 * {@link verifyPassword} when there is a stored hash, {@link dummyVerify} when there is none: a
 * login that cannot reveal whether the email exists by its timing. An app that hashes with a
 * cost of its own passes it too, so that the dummy costs what its users' hashes cost.
 *
 * @example
 * const user = await db.users.findByEmail(input.email);
 * const ok = await verifyPasswordOrDummy(user?.passwordHash, input.password);
 * if (user === undefined || !ok) throw invalidCredentials(); // one answer for both cases
 */
export async function verifyPasswordOrDummy(
  encoded: string | null | undefined,
  password: string,
  cost: ScryptCost = {},
): Promise<boolean> {
  if (encoded === null || encoded === undefined || encoded === '') return dummyVerify(password, cost);
  const matches = await verifyPassword(encoded, password);
  // A hash made at a cheaper cost (before the default was raised) checks faster than the dummy
  // of an unknown email: the rest of the dummy's work is done too, so that neither a right nor a
  // wrong password on an account that has not signed in since tells that the account exists.
  const wanted = costOf(cost);
  const stored = parse(encoded).cost;
  const missing = workOf(wanted) - workOf(stored);
  if (missing > 0)
    await derive(password, randomBytes(saltBytes), {
      N: wanted.N,
      r: wanted.r,
      p: Math.max(1, Math.round(missing / memoryOf(wanted))),
    });
  return matches;
}

/** The memory of one scrypt (128 × N × r bytes), and its work (that, p times over). */
const memoryOf = (cost: Required<ScryptCost>) => cost.N * cost.r;
const workOf = (cost: Required<ScryptCost>) => cost.N * cost.r * cost.p;

/**
 * True when a stored hash is weaker than `cost`: less work (N × r × p) or less memory (N × r).
 * A hash that differs but is as strong in both (N = 2^17 with p = 1 against the default's 2^14
 * with p = 5) is kept: re-hashing it would lower its memory. Re-hash after a successful login.
 *
 * @example
 * if (needsRehash(user.passwordHash)) await db.users.setPasswordHash(user.id, await hashPassword(password));
 */
export function needsRehash(encoded: string, cost: ScryptCost = {}): boolean {
  const wanted = costOf(cost);
  const { cost: current } = parse(encoded);
  return workOf(current) < workOf(wanted) || memoryOf(current) < memoryOf(wanted);
}
