/**
 * A socket procedure's reply (docs/sockets.md): what checks each message of the client, writes
 * each of the handler's and runs the handler once the HTTP layer has opened the socket.
 */
import type { Call, CompileOptions, Reply } from './call.js';
import { createBodyDateCoercer } from './coerce.js';
import { credentialsOf } from './credentials.js';
import { ValidationError } from './errors.js';
import { refuseNul } from './nul.js';
import { compileSerializer, OutputMismatchError } from './output.js';
import type { ResponseControl } from './response.js';
import type { RouteEntry } from './routes.js';
import { guardsStillAllow } from './run-guards.js';
import { validate } from './schema.js';
import type { SocketChannel } from './sockets.js';
import { keyShapeOf, refuseUnknownKeys } from './unknown-keys.js';
import { unsendableKind } from './unsendable.js';

const messageKeys = { noun: 'key' } as const;

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof (value as { then?: unknown } | null)?.then === 'function';

/**
 * For a procedure declared with `.output(webSocket())`, what hands the socket's answer to the
 * HTTP layer: the handler runs only once the upgrade is done. Undefined for any other procedure.
 */
export function socketer(
  route: RouteEntry,
  options: CompileOptions = {},
): ((call: Call, input: unknown, response: ResponseControl<never>) => Reply) | undefined {
  const { output, handler, guards } = route.definition;
  if (output?.kind !== 'socket') return undefined;
  const { socket } = output;
  const writeMessage = compileSerializer(socket.send);
  const owner = `${route.collection}.${route.name}`;
  const receive = socket.receive;
  // A key the schema does not name is refused, as in a REST body, not stripped unread.
  const shape = keyShapeOf(receive);
  // A message is JSON, as a body is: its dates arrive as ISO 8601 text, read where the schema says.
  const reviveDates = createBodyDateCoercer(receive);
  const check = (message: unknown): unknown => {
    refuseNul(message);
    refuseUnknownKeys(message, shape, messageKeys);
    const result = validate(receive, reviveDates(message));
    if (isThenable(result))
      throw new TypeError(
        `${owner}: webSocket's receive schema validates asynchronously; messages need a synchronous one`,
      );
    if (!result.ok) throw new ValidationError(result.errors);
    return result.value;
  };
  return (call, input, response) => {
    const run = async (channel: SocketChannel): Promise<void> => {
      const send = async (message: unknown) => {
        let text: string;
        try {
          const written = writeMessage(message, call.ctx);
          text = typeof written === 'string' ? written : await written;
        } catch (error) {
          channel.fail(error);
          throw error;
        }
        await channel.send(text);
      };
      const returned = handler({
        input: input as never,
        ctx: call.ctx as never,
        response,
        ...({ messages: channel.messages, send, signal: channel.signal, refuse: channel.refuse } as object),
      } as never);
      const settled = isThenable(returned) ? await returned : returned;
      if (settled === undefined) return;
      if (typeof (settled as AsyncIterable<unknown> | null)?.[Symbol.asyncIterator] !== 'function')
        throw new OutputMismatchError(
          `${owner} is declared .output(webSocket()) and returned ${unsendableKind(settled) ?? String(settled)}: send with send() and return nothing, or make the handler an async function* that yields its messages (docs/sockets.md)`,
        );
      for await (const message of settled as AsyncIterable<unknown>) {
        if (channel.signal.aborted) break;
        await send(message);
      }
    };
    const credentials = credentialsOf(call.ctx);
    const stillAllowed = guardsStillAllow(
      guards,
      call.ctx,
      owner,
      options,
      credentials?.stillHold !== undefined,
    );
    return {
      status: 101,
      body: '',
      location: undefined,
      version: undefined,
      socket: { limits: socket, check, run, credentials, stillAllowed },
    };
  };
}
