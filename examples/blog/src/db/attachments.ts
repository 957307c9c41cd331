/**
 * Post attachments (docs/blog.md, "Attachments"): where the files uploaded to a post are kept.
 * The routes see only the {@link AttachmentStore} interface. The default keeps each file's bytes
 * in a directory, one folder per post, linked from the upload's spool or streamed (never whole in
 * memory), and what is known of it in the `attachments` table (migrations/0004 and 0006), beside
 * its post. Another store (an S3-like bucket) implements the same three methods and is passed as
 * `createBlogApp({ attachments })`.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { access, mkdir, rename, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { and, eq, sql } from 'drizzle-orm';
import { NotFoundError, saveFile } from 'proceedjs';
import type { Db } from './connect.js';
import { FOREIGN_KEY_VIOLATION, sqlState } from './errors.js';
import { newId } from './ids.js';
import { attachments, posts } from './schema.js';

/** What is known of a stored file, without its bytes. */
export interface Attachment {
  id: string;
  postId: string;
  /** The file name the client sent, as the upload cleaned it (docs/uploads.md). */
  name: string;
  mediaType: string;
  /** In bytes. */
  size: number;
  /** The SHA-256 of the bytes in lower-case hex: the file's ETag. */
  sha256: string;
  createdAt: Date;
}

/** Where a stored file's bytes are: a file on disk, or bytes in memory. */
export type AttachmentContent = { readonly path: string } | { readonly bytes: Uint8Array };

/** A stored file: what is known of it, and where its bytes are. */
export interface StoredAttachment extends Attachment {
  content: AttachmentContent;
}

export interface NewAttachment {
  postId: string;
  name: string;
  mediaType: string;
  /** The bytes, read as a stream: the upload's `File` as the handler got it. */
  file: Blob;
}

/** Where attachments live. Every instance of the blog must see the same store. */
export interface AttachmentStore {
  /**
   * Keeps a file of a post and returns what it stored (a new id, its size and SHA-256). A post
   * that no longer exists is `NotFoundError` (it was deleted since the caller loaded it).
   */
  save(file: NewAttachment): Promise<Attachment>;
  /** The file `id` of post `postId` and where its bytes are; `undefined` when that post has no such file. */
  find(postId: string, id: string): Promise<StoredAttachment | undefined>;
  /**
   * Removes the bytes of these posts, once they are deleted (their rows went with them). Only the
   * posts named: a directory may hold other databases' files, which no sweep may judge.
   */
  removeFilesOf(postIds: readonly string[]): Promise<void>;
}

/** The SHA-256 of some bytes in lower-case hex. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

const described = {
  id: attachments.id,
  postId: attachments.postId,
  name: attachments.name,
  mediaType: attachments.mediaType,
  size: attachments.size,
  sha256: attachments.sha256,
  createdAt: attachments.createdAt,
};

/** A post's folder is named by its id: nothing else in the directory is the store's. */
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const isMissing = (error: unknown) => (error as { code?: string }).code === 'ENOENT';

/** The size and SHA-256 of a file on disk, read a chunk at a time. */
async function hashOf(path: string): Promise<{ size: number; sha256: string }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    hash.update(chunk);
    size += chunk.byteLength;
  }
  return { size, sha256: hash.digest('hex') };
}

/**
 * Attachments whose bytes are files in `directory` (`<postId>/<attachmentId>`) and whose
 * description is a row of the `attachments` table: the default store.
 *
 * @example
 * const store = fileAttachments(database.db, '/srv/blog/attachments');
 * const saved = await store.save({ postId, name: 'notes.txt', mediaType: 'text/plain', file });
 * const found = await store.find(postId, saved.id); // { ...saved, content: { path } }
 */
export function fileAttachments(db: Db, directory: string): AttachmentStore {
  const byId = db
    .select({ ...described, bytes: attachments.bytes })
    .from(attachments)
    .where(and(eq(attachments.id, sql.placeholder('id')), eq(attachments.postId, sql.placeholder('postId'))))
    .prepare('attachments_by_id');
  const pathOf = (postId: string, id: string) => join(directory, postId, id);
  const postExists = async (postId: string) =>
    (await db.select({ id: posts.id }).from(posts).where(eq(posts.id, postId))).length > 0;
  return {
    async save({ postId, name, mediaType, file }) {
      const id = newId();
      const folder = join(directory, postId);
      const path = pathOf(postId, id);
      // Written beside its final name, then renamed: a reader never finds half a file.
      const partial = `${path}.partial`;
      let placed = false;
      try {
        await mkdir(folder, { recursive: true });
        // An upload spooled on disk is linked, not copied; a small one is written from memory.
        await saveFile(file, partial);
        const { size, sha256 } = await hashOf(partial);
        await rename(partial, path);
        placed = true;
        const [saved] = await db
          .insert(attachments)
          .values({ id, postId, name, mediaType, size, sha256 })
          .returning(described);
        return saved as Attachment;
      } catch (error) {
        await rm(partial, { force: true });
        if (placed) await rm(path, { force: true });
        // The post was deleted after the author check: its row (the insert's foreign key), or its
        // folder, which its deletion removes, at any step of the file's (ENOENT). The row decides:
        // the folder may be there again, made by another upload to the same post meanwhile.
        const postGone =
          sqlState(error) === FOREIGN_KEY_VIOLATION || (isMissing(error) && !(await postExists(postId)));
        if (!postGone) throw error;
        // The folder this upload made again for a post now gone; another upload's files keep it.
        await rmdir(folder).catch(() => undefined);
        throw new NotFoundError('No post with this id');
      }
    },

    async find(postId, id) {
      const [found] = await byId.execute({ id, postId });
      if (found === undefined) return undefined;
      const { bytes, ...attachment } = found;
      if (bytes !== null) return { ...attachment, content: { bytes } };
      // From the row, as stored (lower case): the request's ids match it in any case.
      const path = pathOf(found.postId, found.id);
      try {
        await access(path);
      } catch (error) {
        // A row whose file is gone (removed by hand, a lost disk): as if it were not there.
        if (isMissing(error)) return undefined;
        throw error;
      }
      return { ...attachment, content: { path } };
    },

    async removeFilesOf(postIds) {
      // An upload to the post may be writing its file while the folder goes (ENOTEMPTY): Node
      // tries again a moment later, as the upload then finds the post gone and drops its file.
      for (const postId of postIds)
        if (uuid.test(postId))
          await rm(join(directory, postId), { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
    },
  };
}
