import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import type { TSchema } from 'typebox';

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
type AddFormats = (ajv: Ajv, formats: string[]) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ?? addFormatsModule) as unknown as AddFormats;

/**
 * Request validation (SPEC §1): every offending field at once (`allErrors`), unknown body fields rejected
 * rather than stripped (`removeAdditional: false`), and no type coercion of JSON bodies (`"age": "5"` is a
 * 400, not 5). Query strings, path parameters and headers are text, so there numbers are coerced.
 */
export function installValidators(app: FastifyInstance, schemas: TSchema[]): void {
  const base: Options = { allErrors: true, removeAdditional: false, useDefaults: true, strict: false, ownProperties: true };
  const body = new Ajv({ ...base, coerceTypes: false });
  const text = new Ajv({ ...base, coerceTypes: 'array' });
  for (const ajv of [body, text]) {
    addFormats(ajv, ['email', 'date-time', 'uri', 'uri-reference', 'uuid', 'int32', 'int64', 'password']);
    for (const s of schemas) ajv.addSchema(s);
  }
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? body : text).compile(schema as object));
}
