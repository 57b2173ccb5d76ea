import { z } from 'zod';

/**
 * Wire schemas of the source catalog (`GET /v1/sources`, `GET /v1/sources/{name}`). Shared pieces are in api.ts.
 */

/** Query of `GET /v1/sources`. */
export const listSourcesQuerySchema = z.strictObject({
  refresh: z.enum(['true', 'false']).optional().describe('List every store again instead of serving the cached listing.'),
});

/** One source in the listing. */
export const sourceItemSchema = z.object({
  name: z.string(),
  kind: z.enum(['recipe', 'agent', 'subrecipe']),
  description: z.string().nullable(),
  requiredParameters: z.array(z.string()),
});

/** Answer of `GET /v1/sources`. */
export const listSourcesResponseSchema = z.object({
  items: z.array(sourceItemSchema),
  /** Failed stores (stale or not), refused or invalid files, worded for people. */
  problems: z.array(z.string()),
  /** Sources hidden by an earlier source of the same name: which one wins and why, worded for people. */
  shadowed: z.array(z.string()),
  stores: z.array(z.object({ id: z.string(), description: z.string(), stale: z.boolean(), error: z.string().optional() })),
  searched: z.array(z.string()),
});
/** Answer of `GET /v1/sources`. */
export type ListSourcesResponse = z.infer<typeof listSourcesResponseSchema>;

/** Path of `GET /v1/sources/{name}`. */
export const sourcePathSchema = z.strictObject({
  name: z.string().min(1).max(200).describe('A recipe or agent name.'),
});

/** Answer of `GET /v1/sources/{name}`: what `load(name)` shows, and the raw file. */
export const sourceContentResponseSchema = z.object({
  name: z.string(),
  kind: z.enum(['recipe', 'agent', 'subrecipe']),
  store: z.object({ id: z.string(), description: z.string() }),
  path: z.string(),
  version: z.string(),
  contentHash: z.string(),
  /** The text `load(name)` returns to a model. */
  text: z.string(),
  /** The raw file. */
  content: z.string(),
  parameters: z.array(
    z.object({
      key: z.string(),
      input_type: z.string(),
      requirement: z.string(),
      description: z.string().optional(),
      default: z.string().optional(),
      options: z.array(z.string()).optional(),
    }),
  ),
  warnings: z.array(z.string()),
});
/** Answer of `GET /v1/sources/{name}`. */
export type SourceContentResponse = z.infer<typeof sourceContentResponseSchema>;
