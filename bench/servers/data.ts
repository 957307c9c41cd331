import { announce } from './announce.js';

/** The record both contenders serve: more fields than any view declares, as a database row would have. */
export const item = {
  id: '0190a4f2-5b6c-7d8e-9f00-112233445566',
  title: 'Benchmarks are a feature',
  excerpt: 'Measured side by side, alternating, medians.',
  content: 'The same work on both sides: validate the id, load the record, serialize its public view.',
  authorId: '0190a4f2-0000-7000-8000-000000000001',
  status: 'published',
  passwordHash: 'scrypt$never$leaves',
  createdAt: new Date('2026-01-01T00:00:00Z'),
  updatedAt: new Date('2026-01-02T00:00:00Z'),
};

export function ready(address: string): void {
  announce({ address });
}
