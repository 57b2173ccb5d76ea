import { z } from 'zod';
import { problemSchema } from '../contracts/api';
import { problemContentType } from './problem';
import type { RouteSpec } from './route-spec';

/**
 * Generates the OpenAPI 3.1 document from the route specs — the same zod schemas the routes validate
 * with — using zod's own JSON Schema output (OpenAPI 3.1 schemas are JSON Schema 2020-12).
 */

/** Version of the HTTP API (the `/v1` paths) and of its document. */
export const apiVersion = '1.0.0';

type JsonSchema = Record<string, unknown>;

/** A JSON-RPC 2.0 error answer, as the MCP transport sends for a message it cannot take. */
const jsonRpcErrorSchema: JsonSchema = {
  type: 'object',
  required: ['jsonrpc', 'error'],
  properties: {
    jsonrpc: { const: '2.0' },
    error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} } },
    id: {},
  },
};

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const generated: JsonSchema = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' });
  // The dialect is declared once for the document (jsonSchemaDialect), not in every schema.
  const { $schema: _dialect, ...rest } = generated;
  return rest;
}

/**
 * One event of a server-sent event stream, as OpenAPI 3.1 describes a `text/event-stream` (its `schema` is
 * one event: the `event` name, the `data` line and the `id`): for each name, its `data` is a string whose
 * content is JSON of the event's schema (JSON Schema's `contentMediaType` and `contentSchema`).
 */
function eventSchema(events: Record<string, { data: z.ZodType; description: string }>): JsonSchema {
  return {
    description: 'One server-sent event. Comment lines keep the connection open; the last event of each look carries an `id`.',
    oneOf: Object.entries(events).map(([name, event]) => ({
      type: 'object',
      description: event.description,
      required: ['event', 'data'],
      properties: {
        event: { const: name },
        data: { type: 'string', contentMediaType: 'application/json', contentSchema: jsonSchema(event.data, 'output') },
        id: { type: 'string' },
      },
    })),
  };
}

function shapeOf(schema: z.ZodType): Record<string, z.ZodType> {
  if (schema instanceof z.ZodObject) return schema.shape;
  return {};
}

function isOptional(schema: z.ZodType): boolean {
  return schema.safeParse(undefined).success;
}

function parameter(name: string, location: 'path' | 'query' | 'header', schema: z.ZodType): JsonSchema {
  const { description, ...rest } = jsonSchema(schema, 'input');
  return {
    name,
    in: location,
    required: location === 'path' ? true : !isOptional(schema),
    ...(typeof description === 'string' ? { description } : {}),
    schema: rest,
  };
}

function operation(spec: RouteSpec): JsonSchema {
  const parameters = [
    ...Object.entries(shapeOf(spec.params)).map(([name, schema]) => parameter(name, 'path', schema)),
    ...Object.entries(shapeOf(spec.query)).map(([name, schema]) => parameter(name, 'query', schema)),
    ...Object.entries(spec.headers ?? {}).map(([name, header]) => ({ ...parameter(name, 'header', header.schema), description: header.description })),
  ];
  const responses: Record<string, JsonSchema> = {};
  for (const [status, response] of Object.entries(spec.responses)) {
    responses[status] = response.empty
      ? { description: response.description }
      : response.events
      ? { description: response.description, content: { [response.contentType ?? 'text/event-stream']: { schema: eventSchema(response.events) } } }
      : response.schema
      ? { description: response.description, content: { [response.contentType ?? 'application/json']: { schema: jsonSchema(response.schema, 'output') } } }
      : {
          description: response.description,
          content: { [problemContentType]: { schema: { $ref: '#/components/schemas/Problem' } }, ...(response.orJsonRpcError ? { 'application/json': { schema: jsonRpcErrorSchema } } : {}) },
        };
  }
  if (!responses['500']) {
    responses['500'] = { description: 'A server fault (never a bad request).', content: { [problemContentType]: { schema: { $ref: '#/components/schemas/Problem' } } } };
  }
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    tags: [spec.tag],
    security: spec.authenticated ? [{ bearerAuth: [] }] : [],
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(spec.body
      ? { requestBody: { required: spec.body.required, description: spec.body.description, content: { 'application/json': { schema: jsonSchema(spec.body.schema, 'input') } } } }
      : {}),
    responses,
  };
}

/** The OpenAPI 3.1 document of the given routes. */
export function buildOpenApiDocument(routes: readonly RouteSpec[]): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const spec of routes) {
    const item = (paths[spec.path] ??= {});
    item[spec.method] = operation(spec);
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'errand API',
      version: apiVersion,
      description: 'Durable subagent delegation on Temporal: start, peek, wait for, cancel and message subagents. Errors are RFC 9457 problem documents.',
    },
    tags: [
      { name: 'delegations', description: 'Subagents started directly or by sessions.' },
      { name: 'workflows', description: 'Workflow scripts run durably, each agent a delegation.' },
      { name: 'sources', description: 'Recipes and agents that can be delegated.' },
      { name: 'models', description: 'The model allow-list.' },
      { name: 'system', description: 'Health and this document.' },
    ],
    paths,
    components: {
      schemas: { Problem: jsonSchema(problemSchema, 'output') },
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key: `Authorization: Bearer <key>`.' } },
    },
  };
}
