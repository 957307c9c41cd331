/**
 * Post attachments (docs/blog.md, "Attachments"): where the files uploaded to a post are kept.
 * The routes see only the {@link AttachmentStore} interface; the default keeps each file in the
 * `attachments` table (migrations/0004_attachments.sql), beside its post, so every instance on
 * the database serves the same files and a deleted post takes its files with it. Another store
 * (an S3-like bucket) implements the same two methods and is passed as `createBlogApp({ attachments })`.
 */
import { createHash } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { NotFoundError } from 'proceedjs';
import type { Db } from './connect.js';
import { FOREIGN_KEY_VIOLATION, sqlState } from './errors.js';
import { newId } from './ids.js';
import { attachments } from './schema.js';

/** What is known of a stored file, without its bytes. */
export interface Attachment {
  id: string;
  postId: string;
  /** The file name the client sent, as it sent it. */
  name: string;
  mediaType: string;
  /** In bytes. */
  size: number;
  /** The SHA-256 of the bytes in lower-case hex: the file's ETag. */
  sha256: string;
  createdAt: Date;
}

/** A stored file: what is known of it, and its bytes. */
export interface StoredAttachment extends Attachment {
  bytes: Uint8Array;
}

export interface NewAttachment {
  postId: string;
  name: string;
  mediaType: string;
  bytes: Uint8Array;
}

/** Where attachments live. Every instance of the blog must see the same store. */
export interface AttachmentStore {
  /**
   * Keeps a file of a post and returns what it stored (a new id, its size and SHA-256). A post
   * that no longer exists is `NotFoundError` (it was deleted since the caller loaded it).
   */
  save(file: NewAttachment): Promise<Attachment>;
  /** The file `id` of post `postId` with its bytes; `undefined` when that post has no such file. */
  find(postId: string, id: string): Promise<StoredAttachment | undefined>;
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

/**
 * Attachments in the database's `attachments` table: the default store.
 *
 * @example
 * const store = attachmentsRepository(database.db);
 * const saved = await store.save({ postId, name: 'notes.txt', mediaType: 'text/plain', bytes });
 * const file = await store.find(postId, saved.id); // { ...saved, bytes }
 */
export function attachmentsRepository(db: Db): AttachmentStore {
  const byId = db
    .select({ ...described, bytes: attachments.bytes })
    .from(attachments)
    .where(and(eq(attachments.id, sql.placeholder('id')), eq(attachments.postId, sql.placeholder('postId'))))
    .prepare('attachments_by_id');
  return {
    async save(file) {
      try {
        const [saved] = await db
          .insert(attachments)
          .values({
            id: newId(),
            postId: file.postId,
            name: file.name,
            mediaType: file.mediaType,
            size: file.bytes.byteLength,
            sha256: sha256Hex(file.bytes),
            bytes: file.bytes,
          })
          .returning(described);
        return saved as Attachment;
      } catch (error) {
        // The post was deleted between the author check and this insert.
        if (sqlState(error) === FOREIGN_KEY_VIOLATION) throw new NotFoundError('No post with this id');
        throw error;
      }
    },

    async find(postId, id) {
      const [found] = await byId.execute({ id, postId });
      return found;
    },
  };
}
