/**
 * `npm run bench:passwords`: what a login costs when the email is unknown against when the
 * password is wrong (src/auth/password.ts, `verifyPasswordOrDummy`), alternated one by one, 15
 * of each, medians and spread. The two must cost the same, or the time of a login tells whether
 * an account exists; the test beside the source checks that both run the same scrypt, and this
 * measures it (docs/auth.md, "Passwords").
 */
import { hashPassword, verifyPasswordOrDummy } from 'proceedjs/auth';

const hash = await hashPassword('the right password');
const timed = async (stored: string | undefined): Promise<number> => {
  const started = process.hrtime.bigint();
  await verifyPasswordOrDummy(stored, 'a wrong password');
  return Number(process.hrtime.bigint() - started) / 1e6;
};
await timed(undefined);
const samples = { 'wrong password': [] as number[], 'unknown email': [] as number[] };
for (let round = 0; round < 15; round++) {
  samples['wrong password'].push(await timed(hash));
  samples['unknown email'].push(await timed(undefined));
}
const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
for (const [name, values] of Object.entries(samples)) {
  console.log(
    `${name}: ${median(values).toFixed(1)} ms (rounds ${Math.min(...values).toFixed(1)}–${Math.max(...values).toFixed(1)})`,
  );
}
console.log(
  `unknown email ÷ wrong password: ${(median(samples['unknown email']) / median(samples['wrong password'])).toFixed(2)}`,
);
