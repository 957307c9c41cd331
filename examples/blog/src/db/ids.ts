/**
 * Record ids: UUIDv7, made by the app. Their first 48 bits are the creation time in milliseconds
 * and the `uuid` package keeps them increasing within a process, so ordering by id is ordering by
 * creation, which the cursor listings rely on.
 */
import { v7 as uuidv7 } from 'uuid';

/**
 * A new id, or one stamped with a given creation time (seed data, imports).
 *
 * @example
 * newId(); // '01936b2e-…'
 * newId(new Date('2024-01-01'));
 */
export function newId(createdAt?: Date): string {
  return createdAt === undefined ? uuidv7() : uuidv7({ msecs: createdAt.getTime() });
}
