/**
 * Collects the reusable schemas of a document. Zod writes the schemas registered with
 * `.meta({ id })` (the resource views) into a `$defs` block per conversion; OpenAPI wants them
 * once, in `components.schemas`. Lifting them keeps one component per view, so a client sees
 * that `PostPublic` and `PostAuthenticated` are two different shapes.
 */
import { ProceedConfigError } from '../core/errors.js';
import type { JsonSchema } from '../core/schema.js';

const componentPrefix = '#/components/schemas/';
/** Names Zod makes up for unnamed schemas it must share (recursive ones); ours to rename. */
const anonymousName = /^__schema\d+$/;
const invalidNameCharacters = /[^A-Za-z0-9._-]/g;

/** JSON with sorted keys: two schemas are the same component when their texts are equal. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return item;
    return Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  });
}

/** A copy of a JSON value with every `$ref` passed through `rewrite`. */
function rewriteRefs(value: unknown, rewrite: (ref: string) => string): unknown {
  if (Array.isArray(value)) return value.map((item) => rewriteRefs(item, rewrite));
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    copy[key] = key === '$ref' && typeof item === 'string' ? rewrite(item) : rewriteRefs(item, rewrite);
  }
  return copy;
}

function hasSelfReference(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasSelfReference);
  if (typeof value !== 'object' || value === null) return false;
  for (const [key, item] of Object.entries(value)) {
    if (key === '$ref' && item === '#') return true;
    if (key !== '$defs' && hasSelfReference(item)) return true;
  }
  return false;
}

/** Turns free text into a valid component name (`^[A-Za-z0-9._-]+$`). */
export function componentName(text: string): string {
  const cleaned = text.replace(invalidNameCharacters, '_');
  return cleaned === '' ? 'Schema' : cleaned;
}

/** The `components.schemas` of one document under construction. */
export class SchemaComponents {
  readonly schemas: Record<string, JsonSchema> = {};
  readonly #texts = new Map<string, string>();
  readonly #owners = new Map<string, string>();
  readonly #reserved = new Set<string>();

  /**
   * Moves the `$defs` of a converted schema into the components and returns the schema with its
   * references pointing there. `owner` names the schema's origin in error messages; `hint` names
   * the components made for unnamed shared schemas.
   */
  lift(schema: JsonSchema, owner: string, hint: string): JsonSchema {
    const { $defs, ...root } = schema;
    const defs = ($defs ?? {}) as Record<string, JsonSchema>;
    const names = new Map<string, string>();
    let anonymous = 0;
    for (const key of Object.keys(defs)) {
      names.set(key, anonymousName.test(key) ? this.#freeName(`${hint}${++anonymous}`) : key);
    }
    const selfName = hasSelfReference(root) ? this.#freeName(componentName(hint)) : undefined;
    const rewrite = (ref: string): string => {
      if (ref === '#' && selfName !== undefined) return `${componentPrefix}${selfName}`;
      if (!ref.startsWith('#/$defs/')) return ref;
      const [key = '', ...rest] = ref.slice('#/$defs/'.length).split('/');
      const name = names.get(decodeURIComponent(key)) ?? key;
      return [`${componentPrefix}${encodeURIComponent(name)}`, ...rest].join('/');
    };
    for (const [key, definition] of Object.entries(defs)) {
      this.#add(names.get(key) ?? key, rewriteRefs(definition, rewrite) as JsonSchema, owner);
    }
    const lifted = rewriteRefs(root, rewrite) as JsonSchema;
    if (selfName === undefined) return lifted;
    this.#add(selfName, lifted, owner);
    return { $ref: `${componentPrefix}${selfName}` };
  }

  /** Adds a component under a fixed name; the same name twice must mean the same schema. */
  add(name: string, schema: JsonSchema, owner: string): void {
    this.#add(name, schema, owner);
  }

  #add(name: string, schema: JsonSchema, owner: string): void {
    const text = stableJson(schema);
    const existing = this.#texts.get(name);
    if (existing === undefined) {
      this.#texts.set(name, text);
      this.#owners.set(name, owner);
      this.schemas[name] = schema;
      return;
    }
    if (existing !== text) {
      throw new ProceedConfigError(
        `Two different schemas are registered under the id "${name}" (one in ${this.#owners.get(name)}, ` +
          `another in ${owner}): give each schema its own .meta({ id }), or reuse the same schema object`,
      );
    }
  }

  #freeName(base: string): string {
    const clean = componentName(base);
    let name = clean;
    for (let counter = 2; this.#texts.has(name) || this.#reserved.has(name); counter++) {
      name = `${clean}_${counter}`;
    }
    // Reserved at once, so two unnamed schemas of one conversion never get the same name.
    this.#reserved.add(name);
    return name;
  }
}
