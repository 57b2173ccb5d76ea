import { z } from 'zod';
import { workerDeploymentIdMaxChars } from '../../src/contracts/limits/workflow';
import { buildIdAllowed, buildIdPattern } from '../../src/settings/worker-deployment';

/**
 * The builds whose workers the stack runs (Worker Deployment Versioning, decision 0030): one service per
 * build, so an older build keeps its workers while its pinned subagents finish (decision 0034).
 */

/** One build of the workers, as the `workerBuilds` parameter gives it. */
export interface WorkerBuild {
  /** `ERRAND_WORKER_BUILD_ID` of its workers. */
  buildId: string;
  /** The image of an older build (pushed by an earlier deploy); absent for the build made from this checkout. */
  image?: string;
  /** Worker tasks of this build; absent: `workerCount`. */
  count?: number;
}

/** The parts of an image reference the stack uses. */
export interface ImageReference {
  /** An ECR repository the execution role must be allowed to pull from; absent for other registries. */
  ecr?: { account: string; region: string; repositoryName: string };
}

/**
 * `[registry[:port]/]path[:tag][@sha256:digest]` as Docker reads it (lower-case path components separated by
 * `.`, `_`, `__` or dashes); a tag or a digest is required, so a draining build never moves to another image.
 */
const imageReferencePattern =
  /^(?:(?<registry>[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::\d{1,5})?)\/)?(?<path>[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*)(?::(?<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?(?:@(?<digest>sha256:[a-f0-9]{64}))?$/;
const ecrRegistryPattern = /^(?<account>\d{12})\.dkr\.ecr\.(?<region>[a-z0-9-]+)\.amazonaws\.com(?:\.cn)?$/;

/** What {@link parseImageReference} accepts, for error messages. */
export const imageReferenceAllowed = 'an image reference with a tag or digest, e.g. "123456789012.dkr.ecr.eu-west-1.amazonaws.com/cdk-hnb659fds-container-assets-123456789012-eu-west-1:<tag>" (the WorkerImage<build> output of the deploy that built it)';

/** Parses an image reference; undefined when `value` is not one (or names neither a tag nor a digest). */
export function parseImageReference(value: string): ImageReference | undefined {
  const match = imageReferencePattern.exec(value);
  const groups = match?.groups;
  if (!groups || (groups.tag === undefined && groups.digest === undefined)) return undefined;
  // A first component is a registry only when it looks like a host (Docker's rule): `library/node` is a path.
  const registry = groups.registry;
  const ecr = registry === undefined ? undefined : ecrRegistryPattern.exec(registry)?.groups;
  if (!ecr || groups.path === undefined) return {};
  return { ecr: { account: ecr.account ?? '', region: ecr.region ?? '', repositoryName: groups.path } };
}

const workerBuildSchema = z.strictObject({
  buildId: z
    .string({ error: `the worker build id (ERRAND_WORKER_BUILD_ID): ${buildIdAllowed}` })
    .max(workerDeploymentIdMaxChars, { error: `at most ${workerDeploymentIdMaxChars} characters` })
    .regex(buildIdPattern, { error: `use ${buildIdAllowed}` }),
  image: z.string().refine((value) => parseImageReference(value) !== undefined, { error: `not an image reference: use ${imageReferenceAllowed}` }).optional(),
  count: z.coerce.number().int().min(0).max(100).optional(),
});

/** The letters and digits of a build id: what its construct and output ids keep. */
export function buildIdKey(buildId: string): string {
  return buildId.replace(/[^A-Za-z0-9]/g, '');
}

/**
 * The `workerBuilds` parameter: a JSON array (a string from `-c`, an array from cdk.json) of builds, exactly
 * one without `image` (the build made from this checkout), build ids unique.
 */
export const workerBuildsSchema = z.preprocess(
  (value, context) => {
    if (typeof value !== 'string') return value;
    try {
      return JSON.parse(value) as unknown;
    } catch (error) {
      context.issues.push({ code: 'custom', input: value, message: `not valid JSON (${error instanceof Error ? error.message : String(error)}): use an array such as [{"buildId":"2026.12.1","image":"<image URI>"},{"buildId":"2026.12.2"}]` });
      return z.NEVER;
    }
  },
  z
    .array(workerBuildSchema, { error: 'a JSON array of {"buildId": "...", "image"?: "<image URI>", "count"?: n}' })
    .min(1, { error: 'at least one build: the one made from this checkout, [{"buildId":"..."}]' })
    .superRefine((builds, context) => {
      const fromCheckout = builds.filter((build) => build.image === undefined);
      if (fromCheckout.length !== 1) {
        context.addIssue({
          code: 'custom',
          message:
            fromCheckout.length === 0
              ? 'exactly one build has no "image": the build made from this checkout (every other build names the image an earlier deploy pushed)'
              : `exactly one build has no "image", but ${fromCheckout.map((build) => `"${build.buildId}"`).join(' and ')} have none: only the build made from this checkout goes without one; an older build names the image an earlier deploy pushed (its WorkerImage output)`,
        });
      }
      const seen = new Map<string, string>();
      for (const [index, build] of builds.entries()) {
        const key = buildIdKey(build.buildId);
        const earlier = seen.get(key);
        if (earlier === build.buildId) context.addIssue({ code: 'custom', path: [index, 'buildId'], message: `build id "${build.buildId}" appears twice: each build runs as one service` });
        else if (earlier !== undefined) context.addIssue({ code: 'custom', path: [index, 'buildId'], message: `build ids "${earlier}" and "${build.buildId}" differ only in punctuation: the stack names each build's service and outputs by its letters and digits` });
        else seen.set(key, build.buildId);
      }
    }),
);
