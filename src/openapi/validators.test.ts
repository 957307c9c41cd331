/**
 * The same API written with Zod, ArkType and Valibot has the same OpenAPI document
 * (docs/procedures.md, "Validators"): the document describes the API, not the library.
 */
import { describe, expect, it } from 'vitest';
import { type ValidatorName, validatorCollection } from '../../test/fixtures/validators.js';
import { createApp } from '../server/create-app.js';
import { generateOpenApi } from './generate.js';
import type { OpenApiDocument } from './types.js';

function documentOf(validator: ValidatorName, wrapValibot = false): OpenApiDocument {
  const app = createApp({ logger: false }).mount([validatorCollection(validator, 'orders', { wrapValibot })]);
  return generateOpenApi({ app, info: { title: 'Orders', version: '1.0.0' } });
}

/** A document without defaults, nor the parameter examples drawn from them: what ArkType leaves out of an input. */
function withoutDefaults(document: OpenApiDocument): unknown {
  return JSON.parse(JSON.stringify(document), (key, value) => {
    if (key === 'default') return undefined;
    if (typeof value === 'object' && value !== null && value.in === 'query') {
      const { example: _drawnFromDefault, ...parameter } = value;
      return parameter;
    }
    return value;
  });
}

describe('one API, three validators', () => {
  const zod = documentOf('zod');

  it('gives Valibot, plain or wrapped with toStandardJsonSchema(), the document Zod gives', () => {
    expect(documentOf('valibot')).toEqual(zod);
    expect(documentOf('valibot', true)).toEqual(zod);
  });

  it('gives ArkType the same document but for input defaults, which ArkType does not describe', () => {
    const arktype = documentOf('arktype');
    const limit = (document: OpenApiDocument) =>
      document.paths['/api/orders/search']?.get?.parameters?.find(
        (parameter) => 'name' in parameter && parameter.name === 'limit',
      );
    expect(limit(zod)).toMatchObject({ schema: { default: 20 }, example: 20 });
    expect(limit(arktype)).not.toHaveProperty('schema.default');
    expect(withoutDefaults(arktype)).toEqual(withoutDefaults(zod));
  });
});
