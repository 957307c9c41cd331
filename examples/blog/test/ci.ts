/**
 * Whether the tests run under CI, where a missing service or tool is a failure rather than a
 * skip. CI systems set `CI` to `true`, `1` or a name; only unset, empty, `false` and `0` mean no.
 */
export function inCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.CI?.trim().toLowerCase();
  return value !== undefined && value !== '' && value !== 'false' && value !== '0';
}
