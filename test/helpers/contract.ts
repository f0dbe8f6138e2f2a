import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

type AddFormats = (ajv: Ajv2020) => Ajv2020;
const addFormats = ((addFormatsModule as unknown as { default?: AddFormats }).default ??
  addFormatsModule) as unknown as AddFormats;

interface Operation {
  method: string;
  template: string;
  regex: RegExp;
  responses: Record<string, { content?: Record<string, { schema?: object }> }>;
}

export interface OpenApiDoc {
  openapi: string;
  paths: Record<string, Record<string, { responses?: Operation['responses'] }>>;
  components?: { schemas?: Record<string, object> };
}

/** The validators of the documents served lately (fromApp), by the document's bytes. */
const byDocument = new Map<string, ContractValidator>();
/** The same validators by what the app that served the document was built from (fromApp's `builtFrom`). */
const byBuild = new Map<string, ContractValidator>();
/** Each validator's document, as served. */
const servedBytes = new WeakMap<ContractValidator, string>();
const DOCUMENTS_KEPT = 16;
/** One app in this many that reuses a document still generates it, and must serve the same bytes (fromApp). */
const RECHECK_EVERY = 20;
let reused = 0;

/** Sets, maps, patterns and functions written out, so that two different values never serialise alike. */
function serialisable(_key: string, value: unknown): unknown {
  if (value instanceof Set) return { set: [...value] };
  if (value instanceof Map) return { map: [...value] };
  if (value instanceof RegExp || typeof value === 'function') return String(value);
  return value;
}

/**
 * Every response a test sees is checked against the served OpenAPI document: its status must be declared
 * for the matched operation and its JSON body must match that status's schema. Responses to paths the
 * document does not have (404, 405) must be the ErrorEnvelope component.
 */
export class ContractValidator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  private readonly ops: Operation[] = [];
  private readonly cache = new Map<string, ValidateFunction>();

  constructor(readonly doc: OpenApiDoc) {
    addFormats(this.ajv);
    this.ajv.addSchema({ $id: 'https://ferry.invalid/openapi.json', components: doc.components ?? {} });
    for (const [template, item] of Object.entries(doc.paths)) {
      const regex = new RegExp(
        '^' + template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}|\{[^}]+\}/g, '[^/]+') + '$',
      );
      for (const [method, op] of Object.entries(item)) {
        this.ops.push({ method: method.toUpperCase(), template, regex, responses: op.responses ?? {} });
      }
    }
    // Static segments beat parameters, as in Fastify's router (/users/me before /users/{id}).
    this.ops.sort((a, b) => ((b.template.match(/\{/g)?.length ?? 0) > (a.template.match(/\{/g)?.length ?? 0) ? -1 : 1));
  }

  /**
   * The validator of the document `app` serves. Apps of one configuration serve the same bytes: one validator
   * per document (by its bytes) serves them all, its schemas compiled once per test process instead of once
   * per app (181 places in the tests build an app, some once per test).
   *
   * The document is a function of what the app was built from (its configuration, its engine, which
   * dependencies it was given): `builtFrom` says that, and an app built from what an earlier one was serves the
   * earlier one's document without generating it again (@fastify/swagger takes 150–500 ms per app, a large share
   * of a test that builds one). One in RECHECK_EVERY still generates it, and fails if the bytes differ.
   */
  static async fromApp(app: FastifyInstance, builtFrom?: unknown): Promise<ContractValidator> {
    const build = builtFrom === undefined ? null : JSON.stringify(builtFrom, serialisable);
    const known = build === null ? undefined : byBuild.get(build);
    if (known && (reused += 1) % RECHECK_EVERY !== 0) return known;
    // The bytes GET /v3/api-docs serves (plugins/openapi.ts), read without a request: a test's own requests are
    // the only ones its rate limits, metrics and logs see.
    const body = JSON.stringify((app as unknown as { swagger(): unknown }).swagger());
    // What `builtFrom` leaves out must not change the document: were it to, the reused validators would be wrong.
    if (known && servedBytes.get(known) !== body)
      throw new Error(`an app built from what an earlier one was serves another document: ${build!.slice(0, 500)}`);
    let validator = byDocument.get(body);
    if (!validator) {
      validator = new ContractValidator(JSON.parse(body) as OpenApiDoc);
      if (byDocument.size >= DOCUMENTS_KEPT) byDocument.delete(byDocument.keys().next().value!);
      byDocument.set(body, validator);
      servedBytes.set(validator, body);
    }
    if (build !== null) {
      if (byBuild.size >= DOCUMENTS_KEPT * 4) byBuild.delete(byBuild.keys().next().value!);
      byBuild.set(build, validator);
    }
    return validator;
  }

  private compile(key: string, schema: object): ValidateFunction {
    let v = this.cache.get(key);
    if (!v) {
      const rewritten = JSON.parse(
        JSON.stringify(schema).replace(/"#\/components\//g, '"https://ferry.invalid/openapi.json#/components/'),
      ) as object;
      v = this.ajv.compile(rewritten);
      this.cache.set(key, v);
    }
    return v;
  }

  /** Returns a list of problems; empty when the response keeps the contract. */
  check(method: string, url: string, status: number, contentType: string | undefined, body: string): string[] {
    let path = url.split('?')[0]!;
    // An unversioned /api path is served by the version its Content-Type names (SPEC §9).
    if (path.startsWith('/api/') && !/^\/api\/v\d+\//.test(path)) {
      const v = /vnd\.ferry\.v(\d+)\+json/.exec(contentType ?? '')?.[1] ?? '1';
      path = `/api/v${v}${path.slice(4)}`;
    }
    const m = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
    // The dashboard (GET /, /app/...) is not the API: `app` is a reserved code, never a `/{code}` redirect.
    const outsideApi = path === '/' || /^\/app(\/|$)/.test(path);
    const op = outsideApi ? undefined : this.ops.find((o) => o.method === m && o.regex.test(path));
    const hasJson = body.length > 0 && (contentType ?? '').includes('json') && method.toUpperCase() !== 'HEAD';
    if (!op) {
      if (!hasJson) return [];
      // The document itself and its viewer are the only JSON the document does not describe.
      if (status < 400 && /^\/(v3\/api-docs|docs)(\/|$)/.test(path)) return [];
      if (status < 400) return [`${method} ${path} answered ${status} with JSON but is not in the OpenAPI document`];
      return this.validate(
        'envelope',
        { $ref: '#/components/schemas/ErrorEnvelope' },
        body,
        `${method} ${path} ${status}`,
      );
    }
    if (status === 304 || method.toUpperCase() === 'OPTIONS') return [];
    const declared = op.responses[String(status)] ?? op.responses[`${String(status)[0]}XX`] ?? op.responses.default;
    if (!declared) return [`${method} ${op.template}: status ${status} is not declared in the OpenAPI document`];
    if (!hasJson) return [];
    const schema = declared.content?.['application/json']?.schema ?? Object.values(declared.content ?? {})[0]?.schema;
    if (!schema) return [`${method} ${op.template} ${status}: a JSON body was sent but the document declares none`];
    return this.validate(`${m} ${op.template} ${status}`, schema, body, `${method} ${op.template} ${status}`);
  }

  private validate(key: string, schema: object, body: string, where: string): string[] {
    let data: unknown;
    try {
      data = JSON.parse(body);
    } catch {
      return [`${where}: body is not JSON`];
    }
    const v = this.compile(key, schema);
    if (v(data)) return [];
    return (v.errors ?? []).map(
      (e) => `${where}: ${e.instancePath || '(root)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`,
    );
  }
}
