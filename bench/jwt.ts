/**
 * `npm run bench:jwt`: one HS256 verification with the settings of Proceed's JwtCodec
 * (src/auth/jwt.ts), without and with fast-jwt's cache of verified tokens, alternating, 7 rounds
 * of 50,000 verifications each, medians (docs/performance.md).
 */
import { createSigner, createVerifier } from 'fast-jwt';

const key = 'a-benchmark-secret-of-at-least-32-bytes!';
const now = Math.floor(Date.now() / 1000);
const token = createSigner({ key, algorithm: 'HS256' })({
  sub: '0190a4f2-0000-7000-8000-000000000001',
  jti: '01a2127b-37a7-7f72-93ba-53ef86c7a6a7',
  type: 'access',
  fam: '01a2127b-37a7-7867-8340-ba974ccc5a93',
  gen: 0,
  iat: now,
  exp: now + 900,
});
const settings = {
  key,
  algorithms: ['HS256' as const],
  clockTolerance: 5000,
  requiredClaims: ['sub', 'jti', 'type', 'iat', 'exp'],
};
const contenders = {
  uncached: createVerifier(settings),
  cached: createVerifier({ ...settings, cache: 1000 }),
};

const perCall = (verify: (token: string) => unknown, count: number): number => {
  const start = process.hrtime.bigint();
  for (let index = 0; index < count; index++) verify(token);
  return Number(process.hrtime.bigint() - start) / count;
};
const samples = { uncached: [] as number[], cached: [] as number[] };
for (let round = 0; round < 7; round++) {
  const order = round % 2 === 0 ? (['uncached', 'cached'] as const) : (['cached', 'uncached'] as const);
  for (const name of order) samples[name].push(perCall(contenders[name], 50_000));
}
const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
for (const name of ['uncached', 'cached'] as const) {
  const values = samples[name];
  console.log(
    `${name}: ${(median(values) / 1000).toFixed(2)} µs per verify (rounds ${(Math.min(...values) / 1000).toFixed(2)}–${(Math.max(...values) / 1000).toFixed(2)})`,
  );
}
