import { describe, expect, it } from 'vitest';
import type { JsonSchema } from './json-schema.js';
import { mapSubschemas } from './subschemas.js';

/** Every `format` keyword gone, at any depth, through mapSubschemas alone. */
function withoutFormats(schema: JsonSchema): JsonSchema {
  const { format: _format, ...rest } = schema;
  return mapSubschemas(rest, withoutFormats);
}

const dated = { type: 'string', format: 'date-time' };

describe('mapSubschemas', () => {
  it('reaches a schema under every keyword that holds one, and nothing else', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: { at: dated, format: { type: 'object', properties: { kind: dated } } },
      patternProperties: { '^x-': dated },
      additionalProperties: dated,
      unevaluatedProperties: dated,
      propertyNames: { type: 'string', format: 'email' },
      dependentSchemas: { at: dated },
      dependencies: { at: dated, other: ['at'] },
      $defs: { When: dated },
      definitions: { When: dated },
      items: [dated, dated],
      prefixItems: [dated],
      additionalItems: dated,
      unevaluatedItems: dated,
      contains: dated,
      contentSchema: dated,
      anyOf: [dated],
      oneOf: [dated],
      allOf: [dated],
      not: dated,
      if: dated,
      // biome-ignore lint/suspicious/noThenProperty: JSON Schema's own keyword
      then: dated,
      else: dated,
      // Not a schema: left as it is.
      examples: [{ format: 'kept' }],
      const: { format: 'kept' },
    };
    const stripped = withoutFormats(schema);
    expect(JSON.stringify(stripped)).not.toMatch(/"format":"(?:date-time|email)"/);
    expect(stripped.examples).toEqual([{ format: 'kept' }]);
    expect(stripped.const).toEqual({ format: 'kept' });
    // A property named `format` is data: it stays, its own schema walked.
    expect(stripped.properties).toMatchObject({ format: { properties: { kind: { type: 'string' } } } });
    expect((stripped.dependencies as JsonSchema).other).toEqual(['at']);
    // The schema given is not changed.
    expect((schema.properties as JsonSchema).at).toEqual(dated);
  });
});
