/**
 * The directories the blog writes (an embedded database's, the attachments'): made at start-up,
 * and refused there with the setting to change when this process cannot write them (a container
 * whose working directory its user does not own), not at the first request that needs them.
 */
import { constants } from 'node:fs';
import { access, mkdir } from 'node:fs/promises';
import { ProceedConfigError } from 'proceedjs/config';

/** Creates `path` if missing and checks this process may write there; a refusal names `setting`. */
export async function writableDirectory(path: string, setting: string): Promise<void> {
  try {
    await mkdir(path, { recursive: true });
    await access(path, constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === undefined || !['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'EEXIST'].includes(code)) throw error;
    throw new ProceedConfigError(
      `Cannot write to the directory ${path} (${setting}): ${(error as Error).message}. ` +
        `Give this server's user write access to it (in a container, a volume it owns), or set ${setting} to a directory it can write.`,
    );
  }
}
