import { describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/settings/config';
import { workerDeploymentFromEnv } from '../../src/settings/worker-deployment';

describe('worker deployment settings', () => {
  test('neither set: an unversioned worker, as before', () => {
    expect(workerDeploymentFromEnv({})).toBeUndefined();
    expect(workerDeploymentFromEnv({ ERRAND_WORKER_DEPLOYMENT_NAME: '', ERRAND_WORKER_BUILD_ID: '' })).toBeUndefined();
    expect(loadConfig({ ERRAND_DATA_DIR: 'state' }).workerDeployment).toBeUndefined();
  });

  test('both set: the version the worker polls as', () => {
    expect(workerDeploymentFromEnv({ ERRAND_WORKER_DEPLOYMENT_NAME: 'errand', ERRAND_WORKER_BUILD_ID: '2026.12.2+a1b2c3' })).toEqual({ deploymentName: 'errand', buildId: '2026.12.2+a1b2c3' });
    expect(loadConfig({ ERRAND_DATA_DIR: 'state', ERRAND_WORKER_DEPLOYMENT_NAME: 'errand', ERRAND_WORKER_BUILD_ID: 'b7' }).workerDeployment).toEqual({ deploymentName: 'errand', buildId: 'b7' });
  });

  test('one without the other is refused, naming the missing setting', () => {
    expect(() => workerDeploymentFromEnv({ ERRAND_WORKER_BUILD_ID: 'b7' })).toThrow(/ERRAND_WORKER_BUILD_ID="b7" is set but ERRAND_WORKER_DEPLOYMENT_NAME is not/);
    expect(() => workerDeploymentFromEnv({ ERRAND_WORKER_DEPLOYMENT_NAME: 'errand' })).toThrow(/ERRAND_WORKER_DEPLOYMENT_NAME="errand" is set but ERRAND_WORKER_BUILD_ID is not/);
    expect(() => loadConfig({ ERRAND_DATA_DIR: 'state', ERRAND_WORKER_BUILD_ID: 'b7' })).toThrow(/ERRAND_WORKER_DEPLOYMENT_NAME is not/);
  });

  test('values Temporal would refuse are refused with what is valid', () => {
    expect(() => workerDeploymentFromEnv({ ERRAND_WORKER_DEPLOYMENT_NAME: 'errand.prod', ERRAND_WORKER_BUILD_ID: 'b7' })).toThrow(/ERRAND_WORKER_DEPLOYMENT_NAME="errand.prod" is not valid: use letters, digits, "-" and "_"/);
    expect(() => workerDeploymentFromEnv({ ERRAND_WORKER_DEPLOYMENT_NAME: 'errand', ERRAND_WORKER_BUILD_ID: 'build 7' })).toThrow(/ERRAND_WORKER_BUILD_ID="build 7" is not valid/);
    expect(() => workerDeploymentFromEnv({ ERRAND_WORKER_DEPLOYMENT_NAME: 'errand', ERRAND_WORKER_BUILD_ID: 'b'.repeat(256) })).toThrow(/ERRAND_WORKER_BUILD_ID is 256 characters long: use at most 255/);
  });
});
