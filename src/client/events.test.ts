import { describe, expect, it } from 'vitest';
import { parseEventStream } from './events.js';

/** A body that arrives in exactly these chunks. */
const body = (chunks: string[]) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk));
      controller.close();
    },
  });

async function parsed(chunks: string[]) {
  const events = [];
  for await (const event of parseEventStream(body(chunks))) events.push(event);
  return events;
}

describe('parseEventStream', () => {
  it('reads fields, joins data lines, skips comments and keeps the last id', async () => {
    expect(
      await parsed([': keep-alive\n\nid: 1\nevent: note\nretry: 50\ndata: a\ndata: b\n\ndata: c\n\n']),
    ).toEqual([
      { event: 'note', data: 'a\nb', id: '1', retry: 50 },
      { event: 'message', data: 'c', id: '1', retry: undefined },
    ]);
  });

  it('reads a CRLF split across two chunks as one line end', async () => {
    expect(await parsed(['data: a\r', '\ndata: b\r\n\r\n'])).toEqual([
      { event: 'message', data: 'a\nb', id: undefined, retry: undefined },
    ]);
  });
});
