import { describe, expect, it } from 'vitest';
import { ProceedError } from '../core/errors.js';
import { parseJson } from './fetch-body.js';

const refusal = (text: string) => {
  try {
    parseJson(text);
  } catch (error) {
    return error instanceof ProceedError ? error.message : String(error);
  }
  return undefined;
};

describe('a JSON body', () => {
  it('refuses a key that could change prototypes, spelled plainly or with escapes, at any depth', () => {
    expect(refusal('{"__proto__":{"admin":true}}')).toMatch(/"__proto__"/);
    // Escapes spell the same key once parsed: the text holds neither name as written.
    expect(refusal('{"\\u005f\\u005fproto__":{"admin":true}}')).toMatch(/"__proto__"/);
    expect(refusal('{"a":[{"constructor":{"prototype":{"admin":true}}}]}')).toMatch(/"a.0.constructor"/);
  });

  it('takes a body whose values only mention those names, and one without them', () => {
    expect(parseJson('{"title":"the constructor of __proto__"}')).toEqual({
      title: 'the constructor of __proto__',
    });
    expect(parseJson('{"title":"caf\\u00e9","constructor":"a string"}')).toEqual({
      title: 'café',
      constructor: 'a string',
    });
    expect(parseJson('{"title":"x","tags":["a"]}')).toEqual({ title: 'x', tags: ['a'] });
    expect(parseJson('')).toBeUndefined();
  });
});
