/**
 * The router of `app.fetch`: a tree of path segments. Proceed's paths are made of literal
 * segments (`[A-Za-z0-9._~-]`) and whole-segment `:params` (src/core/naming.ts), so matching is
 * a walk down the segments, literals before parameters, backing up when a branch ends without a
 * route. It matches as Fastify's router does on Node (one trailing slash ignored, an empty
 * segment matching no literal but binding a parameter to '', parameters percent-decoded) and generates no code: Cloudflare
 * Workers refuse `new Function`, which find-my-way compiles every route with
 * (docs/architecture.md, "One HTTP core").
 */

/** A route's handler, and the names its parameters bind, in order (each route names its own). */
interface Entry<T> {
  readonly handler: T;
  readonly names: readonly string[];
}

interface Node<T> {
  readonly literals: Map<string, Node<T>>;
  /** The child that takes any segment (an empty one too, as on Node). */
  param: Node<T> | undefined;
  readonly handlers: Map<string, Entry<T>>;
}

const newNode = <T>(): Node<T> => ({ literals: new Map(), param: undefined, handlers: new Map() });

export interface Match<T> {
  readonly handler: T;
  readonly params: Record<string, string>;
}

/** A segment percent-decoded, or undefined where its encoding is broken. */
function decoded(segment: string): string | undefined {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

export class Router<T> {
  readonly #root: Node<T> = newNode();
  /** Routes without parameters by their whole path: most requests are found in one lookup. */
  readonly #literalPaths = new Map<string, Map<string, Entry<T>>>();
  /**
   * The nodes reached by literal segments alone, by their path: a route whose one parameter is
   * its last segment (`/api/posts/:id`) is then found in one lookup too.
   */
  readonly #literalNodes = new Map<string, Node<T>>([['', this.#root]]);

  /** Adds a route; the same method on the same path twice is a mistake of the caller. */
  on(methods: string | readonly string[], given: string, handler: T): void {
    // One trailing slash is ignored, here as in `find`: `/posts/` is `/posts`.
    const path = given.length > 1 && given.endsWith('/') ? given.slice(0, -1) : given;
    let node = this.#root;
    const names: string[] = [];
    let literalPath = '';
    for (const segment of path === '/' ? [''] : path.slice(1).split('/')) {
      if (segment.startsWith(':')) {
        // Two routes may name the parameter at one place differently, as on Node.
        names.push(segment.slice(1));
        node.param ??= newNode();
        node = node.param;
      } else {
        let next = node.literals.get(segment);
        if (next === undefined) {
          next = newNode();
          node.literals.set(segment, next);
        }
        node = next;
        if (names.length === 0) {
          literalPath += `/${segment}`;
          this.#literalNodes.set(literalPath, node);
        }
      }
    }
    for (const method of typeof methods === 'string' ? [methods] : methods) {
      if (node.handlers.has(method)) throw new Error(`${method} ${path} is routed twice`);
      node.handlers.set(method, { handler, names });
    }
    // A segment holding ':' after its start (`/posts:search`) is a literal too.
    if (names.length === 0) this.#literalPaths.set(path, node.handlers);
  }

  /** The route for a method and a path (without its query), or null. */
  find(method: string, path: string): Match<T> | null {
    // One trailing slash is ignored: `/posts/` is `/posts`.
    const whole = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    const encoded = whole.includes('%');
    if (!encoded) {
      // A route of literals alone wins over parameters, as the walk would find it first.
      const entry = this.#literalPaths.get(whole)?.get(method);
      if (entry !== undefined) return { handler: entry.handler, params: {} };
      // Literals, then one parameter: what the walk would find first, had no literal matched.
      const slash = whole.lastIndexOf('/');
      const last = this.#literalNodes.get(whole.slice(0, slash))?.param?.handlers.get(method);
      if (last !== undefined) {
        const params: Record<string, string> = {};
        params[last.names[0] as string] = whole.slice(slash + 1);
        return { handler: last.handler, params };
      }
    }
    const values: string[] = [];
    const entry = this.#walk(this.#root, whole, 1, method, values, encoded);
    if (entry === undefined) return null;
    const params: Record<string, string> = {};
    const { names } = entry;
    for (let index = 0; index < names.length; index++)
      params[names[index] as string] = values[index] as string;
    return { handler: entry.handler, params };
  }

  /** The handler below `node` for the rest of `path` from `at` (just past a '/'). */
  #walk(
    node: Node<T>,
    path: string,
    at: number,
    method: string,
    values: string[],
    encoded: boolean,
  ): Entry<T> | undefined {
    const slash = path.indexOf('/', at);
    const end = slash === -1 ? path.length : slash;
    const segment = path.slice(at, end);
    const text = encoded ? decoded(segment) : segment;
    if (text === undefined) return undefined;
    const literal = node.literals.get(text);
    if (literal !== undefined) {
      const found =
        slash === -1
          ? literal.handlers.get(method)
          : this.#walk(literal, path, end + 1, method, values, encoded);
      if (found !== undefined) return found;
    }
    const param = node.param;
    if (param === undefined) return undefined;
    values.push(text);
    const found =
      slash === -1 ? param.handlers.get(method) : this.#walk(param, path, end + 1, method, values, encoded);
    if (found !== undefined) return found;
    values.pop();
    return undefined;
  }
}
