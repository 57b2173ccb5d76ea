import { z } from 'zod';
import { agentDefinitionSchema } from './agent-definition';
import { recipeParameterSchema, recipeSchema } from './recipe-schema';

/**
 * Wire types for sources (SEMANTICS §1 "Snapshots"): a resolved source is copied into the workflow input
 * as JSON, so a replay never reads the store again and the Temporal UI shows what ran.
 */

/** Kinds of source. */
export const sourceKinds = ['recipe', 'agent', 'subrecipe'] as const;
/** A source kind. */
export type SourceKind = (typeof sourceKinds)[number];

/** Which store a source came from. */
export const storeReferenceSchema = z.object({
  /** Stable id, e.g. `dir:/home/me/proj/.goose/recipes`, `git:https://…#main`, `s3://bucket/prefix/`. */
  id: z.string(),
  /** Human description, e.g. "project recipes (.goose/recipes)". */
  description: z.string(),
});
/** Which store a source came from. */
export type StoreReference = z.infer<typeof storeReferenceSchema>;

/** A resolved source, JSON-only, fit for a workflow input. */
export const sourceSnapshotSchema = z.object({
  kind: z.enum(sourceKinds),
  name: z.string(),
  store: storeReferenceSchema,
  /** Path inside the store (POSIX, relative). */
  path: z.string(),
  /** Folder of the source as `recipe_dir` renders it: a local absolute path, or an `s3://` URL. */
  recipeDir: z.string(),
  /** Store version: git commit SHA, S3 VersionId or ETag, or `mtime:<ISO time>` for a local file. */
  version: z.string(),
  /** `sha256:<hex>` of the raw content. */
  contentHash: z.string(),
  /** The raw file text. */
  content: z.string(),
  /** Parsed definition (recipe templates still unrendered). */
  definition: z.discriminatedUnion('type', [
    z.object({ type: z.literal('recipe'), recipe: recipeSchema }),
    z.object({ type: z.literal('agent'), agent: agentDefinitionSchema }),
  ]),
  /** Declared parameters (empty for agents). */
  parameters: z.array(recipeParameterSchema),
  /** A sub-recipe's fixed `values`; they win over parameters passed by the model. */
  fixedValues: z.record(z.string(), z.string()),
  /** For a sub-recipe: its declared description and the parent recipe's name. */
  subRecipe: z.object({ parent: z.string(), description: z.string().optional(), sequentialWhenRepeated: z.boolean() }).optional(),
});
/** A resolved source snapshot. */
export type SourceSnapshot = z.infer<typeof sourceSnapshotSchema>;
