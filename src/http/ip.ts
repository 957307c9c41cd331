/** IP addresses as clients and proxies write them: shared by the client's address and the rate limits. */

/** A dotted-quad IPv4 address, each part 0–255 without leading zeros. */
export const ipv4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** Whether `text` is an IPv4 or IPv6 address, as a proxy writes one (no port, no brackets). */
export function isAddress(text: string): boolean {
  if (ipv4.test(text)) return true;
  if (text.length > 64 || !/^[0-9a-fA-F:.]+(?:%[\w.-]+)?$/.test(text) || !text.includes(':')) return false;
  try {
    return new URL(`http://[${text.replace(/%.*$/, '')}]/`).hostname.length > 2;
  } catch {
    return false;
  }
}
