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
const DOCUMENTS_KEPT = 16;

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
   */
  static async fromApp(app: FastifyInstance): Promise<ContractValidator> {
    const res = await app.inject({ method: 'GET', url: '/v3/api-docs' });
    if (res.statusCode !== 200) throw new Error(`GET /v3/api-docs answered ${res.statusCode}`);
    let validator = byDocument.get(res.body);
    if (!validator) {
      validator = new ContractValidator(res.json() as OpenApiDoc);
      if (byDocument.size >= DOCUMENTS_KEPT) byDocument.delete(byDocument.keys().next().value!);
      byDocument.set(res.body, validator);
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
