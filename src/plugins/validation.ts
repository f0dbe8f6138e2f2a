import { Ajv, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import type { TSchema } from 'typebox';
import { digest, type LazyCompilers } from './lazy-compilers.js';

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
type AddFormats = (ajv: Ajv, formats: string[]) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ??
  addFormatsModule) as unknown as AddFormats;

/**
 * Request validation (SPEC §1): every offending field at once (`allErrors`), unknown body fields rejected
 * rather than stripped (`removeAdditional: false`), and no type coercion of JSON bodies (`"age": "5"` is a
 * 400, not 5). Query strings, path parameters and headers are text, so there numbers are coerced.
 */
const base: Options = {
  allErrors: true,
  removeAdditional: false,
  useDefaults: true,
  strict: false,
  ownProperties: true,
};

function createAjv(coerceTypes: Options['coerceTypes'], schemas: TSchema[]): Ajv {
  const ajv = new Ajv({ ...base, coerceTypes });
  addFormats(ajv, ['email', 'date-time', 'uri', 'uri-reference', 'uuid', 'int32', 'int64', 'password']);
  for (const s of schemas) ajv.addSchema(s);
  return ajv;
}

/**
 * The two Ajv instances for a set of shared schemas, kept for the process like the validators they compile
 * (lazy-compilers.ts): an app built with the same schemas (the same modules) reuses them and their validators.
 */
const ajvsBySchemas = new Map<string, { body: Ajv; text: Ajv }>();

/** Each route's validators compile on first use or in the warm-up after listening (lazy-compilers.ts). */
export function installValidators(app: FastifyInstance, schemas: TSchema[], compilers: LazyCompilers): void {
  const schemasKey = digest(JSON.stringify(schemas));
  const ajvs = ajvsBySchemas.get(schemasKey) ?? { body: createAjv(false, schemas), text: createAjv('array', schemas) };
  ajvsBySchemas.set(schemasKey, ajvs);
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const part = httpPart === 'body' ? 'body' : 'text';
    return compilers.validator(
      () => `${part}\0${schemasKey}\0${JSON.stringify(schema)}`,
      () => ajvs[part].compile(schema as object),
    );
  });
}

/**
 * A body validator with the same rules, for a part of a body that is validated on its own (the items of a
 * bulk creation, each with its own result). `errors` of a failed call are Ajv's, as in a validation error.
 */
export function compileBodyValidator(schema: TSchema): ValidateFunction {
  return createAjv(false, []).compile(schema as object);
}
