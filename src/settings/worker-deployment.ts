import { ConfigError } from './client-config';
import { workerDeploymentIdMaxChars } from '../contracts/limits/workflow';

/**
 * The worker deployment version a worker polls as (Worker Deployment Versioning, decision 0030): the
 * deployment is the service (all of its builds), the build id one release of its code.
 */
export interface WorkerDeploymentSettings {
  /** `ERRAND_WORKER_DEPLOYMENT_NAME`, e.g. `errand`. */
  deploymentName: string;
  /** `ERRAND_WORKER_BUILD_ID`, e.g. a release number or a commit. */
  buildId: string;
}

/** Letters, digits, `-` and `_`: a deployment name never holds the `.` that Temporal puts between it and a build id. */
export const deploymentNamePattern = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
/** What {@link deploymentNamePattern} allows, for error messages. */
export const deploymentNameAllowed = 'letters, digits, "-" and "_", starting with a letter or digit (no ".")';
/** Letters, digits, `.`, `-`, `_` and `+`: what release numbers and commits use. */
export const buildIdPattern = /^[A-Za-z0-9][A-Za-z0-9._+-]*$/;
/** What {@link buildIdPattern} allows, for error messages. */
export const buildIdAllowed = 'letters, digits, ".", "-", "_" and "+", starting with a letter or digit';

/**
 * Reads `ERRAND_WORKER_DEPLOYMENT_NAME` and `ERRAND_WORKER_BUILD_ID`. Neither set: undefined, an unversioned
 * worker (as before). Both set: a versioned worker. One without the other, or a value Temporal would refuse,
 * is an error that names the variable and what would be valid.
 */
export function workerDeploymentFromEnv(env: NodeJS.ProcessEnv): WorkerDeploymentSettings | undefined {
  const deploymentName = nonEmpty(env.ERRAND_WORKER_DEPLOYMENT_NAME);
  const buildId = nonEmpty(env.ERRAND_WORKER_BUILD_ID);
  if (deploymentName === undefined && buildId === undefined) return undefined;
  if (deploymentName === undefined) {
    throw new ConfigError(`ERRAND_WORKER_BUILD_ID="${buildId ?? ''}" is set but ERRAND_WORKER_DEPLOYMENT_NAME is not: a versioned worker needs both (e.g. ERRAND_WORKER_DEPLOYMENT_NAME=errand), or unset ERRAND_WORKER_BUILD_ID for an unversioned worker`);
  }
  if (buildId === undefined) {
    throw new ConfigError(`ERRAND_WORKER_DEPLOYMENT_NAME="${deploymentName}" is set but ERRAND_WORKER_BUILD_ID is not: a versioned worker needs both (e.g. ERRAND_WORKER_BUILD_ID=2026.12.1 or a commit), or unset ERRAND_WORKER_DEPLOYMENT_NAME for an unversioned worker`);
  }
  check('ERRAND_WORKER_DEPLOYMENT_NAME', deploymentName, deploymentNamePattern, deploymentNameAllowed);
  check('ERRAND_WORKER_BUILD_ID', buildId, buildIdPattern, buildIdAllowed);
  return { deploymentName, buildId };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function check(name: string, value: string, pattern: RegExp, allowed: string): void {
  if (value.length > workerDeploymentIdMaxChars) throw new ConfigError(`${name} is ${value.length} characters long: use at most ${workerDeploymentIdMaxChars}`);
  if (!pattern.test(value)) throw new ConfigError(`${name}="${value}" is not valid: use ${allowed}`);
}
