import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApp } from '../../src/api/app';
import { createApiDependencies } from '../../src/api/default-dependencies';
import { buildOpenApiDocument } from '../../src/api/openapi-document';
import { honoPath } from '../../src/api/route-spec';
import { apiRoutes } from '../../src/api/route-table';
import { lazyTemporalClient } from '../../src/api/temporal-client-provider';
import { maxListPageSize } from '../../src/contracts/limits/api';

/**
 * The OpenAPI document lists every mounted route and has the structure OpenAPI 3.1 requires. No OpenAPI
 * validator package is installed, so the essentials of the 3.1 specification are checked with zod.
 */

const httpMethods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const jsonSchemaObject = z.record(z.string(), z.unknown());
const mediaType = z.strictObject({ schema: jsonSchemaObject });
const parameterObject = z
  .strictObject({
    name: z.string().min(1),
    in: z.enum(['query', 'header', 'path', 'cookie']),
    description: z.string().optional(),
    required: z.boolean(),
    schema: jsonSchemaObject,
  })
  .refine((parameter) => parameter.in !== 'path' || parameter.required, { message: 'path parameters must be required' });
const responseObject = z.strictObject({ description: z.string().min(1), content: z.record(z.string().regex(/^[a-z]+\/[a-z0-9.+-]+$/), mediaType).optional() });
const operationObject = z.strictObject({
  operationId: z.string().regex(/^[A-Za-z][A-Za-z0-9]*$/),
  summary: z.string().min(1),
  description: z.string().optional(),
  tags: z.array(z.string()).min(1),
  security: z.array(z.record(z.string(), z.array(z.string()))),
  parameters: z.array(parameterObject).optional(),
  requestBody: z.strictObject({ description: z.string().optional(), required: z.boolean(), content: z.record(z.string(), mediaType) }).optional(),
  responses: z.record(z.string().regex(/^[1-5](\d\d|XX)$|^default$/), responseObject).refine((responses) => Object.keys(responses).length > 0),
});
const openApi31 = z.strictObject({
  openapi: z.string().regex(/^3\.1\.\d+$/),
  jsonSchemaDialect: z.url().optional(),
  info: z.strictObject({ title: z.string().min(1), version: z.string().min(1), description: z.string().optional() }),
  tags: z.array(z.strictObject({ name: z.string(), description: z.string().optional() })).optional(),
  paths: z.record(z.string().startsWith('/'), z.partialRecord(z.enum(httpMethods), operationObject)),
  components: z.strictObject({
    schemas: z.record(z.string(), jsonSchemaObject),
    securitySchemes: z.record(z.string(), z.strictObject({ type: z.literal('http'), scheme: z.string(), description: z.string().optional() })),
  }),
});

function collectRefs(value: unknown, refs: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) collectRefs(item, refs);
  else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string') refs.push(item);
      else collectRefs(item, refs);
    }
  }
  return refs;
}

function appRoutes(): { method: string; path: string }[] {
  const deps = createApiDependencies({
    env: { ERRAND_API_AUTH: 'off', ERRAND_PROVIDERS: '[]' },
    // Routes are listed, never called: the lazy client never connects.
    temporal: lazyTemporalClient({ connection: { address: '127.0.0.1:1' }, namespace: 'default' }),
  });
  return createApp(deps).routes.filter((route) => route.method !== 'ALL').map((route) => ({ method: route.method.toLowerCase(), path: route.path }));
}

describe('OpenAPI document', () => {
  const document = buildOpenApiDocument(apiRoutes);

  it('has the structure of an OpenAPI 3.1 document', () => {
    const parsed = openApi31.safeParse(document);
    expect(parsed.error?.issues ?? []).toEqual([]);
  });

  it('lists every mounted route, and nothing else', () => {
    const documented = Object.entries(z.record(z.string(), z.record(z.string(), z.unknown())).parse(document.paths)).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method} ${honoPath(path)}`),
    );
    const mounted = appRoutes().map((route) => `${route.method} ${route.path}`);
    expect(documented.sort()).toEqual([...new Set(mounted)].sort());
    expect(documented).toEqual(expect.arrayContaining(['post /v1/delegations', 'get /v1/delegations/:id/result', 'post /v1/delegations/:id/messages', 'get /v1/sources/:name', 'get /openapi.json']));
  });

  it('declares every path template parameter, has unique operation ids and resolvable $refs', () => {
    const paths = openApi31.parse(document).paths;
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(paths)) {
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]);
      for (const operation of Object.values(item)) {
        if (!operation) continue;
        expect(ids.has(operation.operationId)).toBe(false);
        ids.add(operation.operationId);
        const declared = (operation.parameters ?? []).filter((parameter) => parameter.in === 'path').map((parameter) => parameter.name);
        expect(declared.sort()).toEqual(templated.sort());
      }
    }
    const schemas = openApi31.parse(document).components.schemas;
    for (const ref of collectRefs(document)) {
      expect(ref.startsWith('#/components/schemas/') && ref.slice('#/components/schemas/'.length) in schemas).toBe(true);
    }
  });

  it('documents the request body with the same schema the route validates (strict delegate request)', () => {
    const start = openApi31.parse(document).paths['/v1/delegations']?.post;
    const schema = start?.requestBody?.content['application/json']?.schema;
    expect(schema).toMatchObject({ type: 'object', additionalProperties: false, properties: { instructions: { type: 'string' }, max_turns: { type: 'integer', minimum: 1 } } });
    expect(start?.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'wait', in: 'query', required: false }), expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false })]));
    expect(Object.keys(start?.responses ?? {})).toEqual(expect.arrayContaining(['200', '201', '400', '401', '413', '422', '500']));
  });
});

describe('OpenAPI document matches the server (what schemathesis checks, pinned)', () => {
  const paths = openApi31.parse(buildOpenApiDocument(apiRoutes)).paths;
  const operations = Object.entries(paths).flatMap(([path, item]) => Object.entries(item).flatMap(([method, operation]) => (operation ? [{ path, method, operation }] : [])));

  it('declares 413 and 415 on every route that takes a body, and 429 on the starts', () => {
    const withBody = operations.filter(({ operation }) => operation.requestBody);
    expect(withBody.length).toBeGreaterThan(5);
    for (const { path, method, operation } of withBody) expect([`${method} ${path}`, Object.keys(operation.responses)]).toEqual([`${method} ${path}`, expect.arrayContaining(['413', '415'])]);
    expect(Object.keys(paths['/v1/delegations']?.post?.responses ?? {})).toContain('429');
    expect(Object.keys(paths['/v1/sessions']?.post?.responses ?? {})).toContain('429');
  });

  it('declares pageSize as exactly the numbers the server takes (1 to the maximum)', () => {
    const pageSize = paths['/v1/delegations']?.get?.parameters?.find((parameter) => parameter.name === 'pageSize');
    const pattern = new RegExp(String((pageSize?.schema as { pattern?: string }).pattern));
    expect(['1', '20', '99', String(maxListPageSize)].every((value) => pattern.test(value))).toBe(true);
    expect(['0', '00', '01', String(maxListPageSize + 1), '-1', '1.5'].some((value) => pattern.test(value))).toBe(false);
  });

  it('describes the events of the event stream, each with the JSON schema of its data', () => {
    const schema = paths['/v1/delegations/{id}/events']?.get?.responses['200']?.content?.['text/event-stream']?.schema as { oneOf?: { properties: { event: { const: string }; data: { contentMediaType: string; contentSchema: unknown } } }[] };
    expect(schema.oneOf?.map((event) => event.properties.event.const)).toEqual(['state', 'turn', 'tool', 'text', 'queued', 'settled', 'error']);
    const turn = schema.oneOf?.find((event) => event.properties.event.const === 'turn')?.properties.data;
    expect(turn).toMatchObject({ contentMediaType: 'application/json', contentSchema: { type: 'object', properties: { turn: { type: 'integer' }, maxTurns: { type: 'integer' } } } });
  });
});
