/**
 * A file answer as the typed client gives it (docs/client.md, "Files and event streams"): a
 * `File` of the bytes, named as the answer's `Content-Disposition` names it (RFC 6266; the UTF-8
 * `filename*` of RFC 8187 before the plain `filename`), with its `Last-Modified` time.
 */

/** The file name a `Content-Disposition` header gives, without any folder; undefined when it names none. */
export function dispositionName(header: string | null): string | undefined {
  if (header === null) return undefined;
  const extended = /(?:^|;)\s*filename\*\s*=\s*([\w!#$%&+^`{}~-]*)'[^']*'([^;\s]*)/i.exec(header);
  if (extended !== null && (extended[1] ?? '').toLowerCase() === 'utf-8') {
    try {
      return baseName(decodeURIComponent(extended[2] ?? ''));
    } catch {
      // Not valid percent-encoded UTF-8: the plain name, if any, stands.
    }
  }
  const quoted = /(?:^|;)\s*filename\s*=\s*"((?:[^"\\]|\\.)*)"/i.exec(header);
  if (quoted !== null) return baseName((quoted[1] ?? '').replace(/\\(.)/g, '$1'));
  const token = /(?:^|;)\s*filename\s*=\s*([^";\s]+)/i.exec(header);
  return token === null ? undefined : baseName(token[1] ?? '');
}

/** The last segment of a name: a server's `../` or folder does not reach where the file is saved. */
function baseName(name: string): string | undefined {
  const last = name.split(/[/\\]/).pop()?.trim() ?? '';
  return last === '' || last === '.' || last === '..' ? undefined : last;
}

/** The answer's bytes as a `File`: its name from `Content-Disposition` ('' when none), its time from `Last-Modified`. */
export function answeredFile(bytes: Blob, headers: Headers): File {
  const modified = Date.parse(headers.get('last-modified') ?? '');
  return new File([bytes], dispositionName(headers.get('content-disposition')) ?? '', {
    type: bytes.type,
    ...(Number.isNaN(modified) ? {} : { lastModified: modified }),
  });
}
