import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { apiBundleEntryFile } from '../../infra/lib/api-bundle';
import { ErrandStack, payloadPrefixes } from '../../infra/lib/errand-stack';
import { parseSettings } from '../../infra/lib/settings';

/**
 * Synthesises the CDK app (no AWS account, no Docker, no network: the Lambda is bundled with the local
 * esbuild, the worker image is only staged) and checks the properties the deployment promises: the HTTP
 * API reaches the Lambda, buckets are private and encrypted, the worker's and the API's rights are limited
 * to their buckets, prefixes and secrets, and no IAM statement allows a `*` action.
 */

let template: Template;
let outdir: string;

type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown; Sid?: string };

function policyStatementsOfRole(roleLogicalIdPrefix: string): Statement[] {
  const policies = template.findResources('AWS::IAM::Policy');
  return Object.values(policies)
    .filter((policy) => JSON.stringify(policy.Properties.Roles).includes(roleLogicalIdPrefix))
    .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[]);
}

function logicalId(type: string, prefix: string): string {
  const id = Object.keys(template.findResources(type)).find((candidate) => candidate.startsWith(prefix));
  if (!id) throw new Error(`no ${type} whose logical id starts with ${prefix}`);
  return id;
}

function actionsOf(statement: Statement): string[] {
  return Array.isArray(statement.Action) ? statement.Action : [statement.Action];
}

beforeAll(() => {
  outdir = mkdtempSync(join(tmpdir(), 'errand-cdk-'));
  const app = new App({ outdir });
  const stack = new ErrandStack(app, 'ErrandTest', {
    env: { account: '123456789012', region: 'eu-west-1' },
    settings: parseSettings({
      temporalAddress: 'errand-prod.a1b2c.tmprl.cloud:7233',
      temporalNamespace: 'errand-prod.a1b2c',
      temporalAuth: 'api-key',
      temporalHttpUrl: 'https://temporal-http.example.com',
      llmKeyNames: 'OPENAI_API_KEY,ANTHROPIC_API_KEY',
      providers: JSON.stringify([{ name: 'openai', kind: 'openai-compatible', baseUrl: 'https://api.openai.com/v1', apiKeyEnv: 'OPENAI_API_KEY', models: ['gpt-4.1-mini'] }]),
    }),
  });
  template = Template.fromStack(stack);
}, 240_000);

afterAll(() => {
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

describe('CDK synthesis', () => {
  test('the HTTP API sends every route to the Lambda, which runs Node 22 and the bundled handler', async () => {
    const functionId = logicalId('AWS::Lambda::Function', 'ApiFunction');
    template.hasResourceProperties('AWS::Lambda::Function', { Runtime: 'nodejs22.x', Handler: 'index.handler' });
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', { ProtocolType: 'HTTP' });
    template.hasResourceProperties('AWS::ApiGatewayV2::Integration', {
      IntegrationType: 'AWS_PROXY',
      PayloadFormatVersion: '2.0',
      IntegrationUri: { 'Fn::GetAtt': [functionId, 'Arn'] },
    });
    const integrationId = logicalId('AWS::ApiGatewayV2::Integration', 'HttpApi');
    template.hasResourceProperties('AWS::ApiGatewayV2::Route', {
      RouteKey: '$default',
      Target: { 'Fn::Join': ['', ['integrations/', { Ref: integrationId }]] },
    });
    template.hasResourceProperties('AWS::Lambda::Permission', { Action: 'lambda:InvokeFunction', FunctionName: { 'Fn::GetAtt': [functionId, 'Arn'] }, Principal: 'apigateway.amazonaws.com' });
    // The bundle esbuild wrote is in the cloud assembly, loads, and exports the handler.
    const manifest = JSON.parse(readFileSync(join(outdir, 'ErrandTest.assets.json'), 'utf8')) as { files: Record<string, { source: { path: string } }> };
    const bundlePath = Object.values(manifest.files)
      .map((file) => join(outdir, file.source.path, apiBundleEntryFile))
      .find((path) => existsSync(path));
    expect(bundlePath).toBeDefined();
    // An ES module (with its chunks beside it), as Lambda's Node runtime loads it.
    const bundled = (await import(pathToFileURL(bundlePath ?? '').href)) as { handler?: unknown };
    expect(typeof bundled.handler).toBe('function');
  });

  test('buckets are private, encrypted and TLS-only; recipes are versioned, payloads expire', () => {
    const buckets = template.findResources('AWS::S3::Bucket');
    expect(Object.keys(buckets)).toHaveLength(2);
    for (const bucket of Object.values(buckets)) {
      expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual({ BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true });
      expect(bucket.Properties.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault.SSEAlgorithm).toBe('AES256');
      expect(bucket.DeletionPolicy).toBe('Retain');
    }
    template.hasResourceProperties('AWS::S3::Bucket', { VersioningConfiguration: { Status: 'Enabled' } });
    template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: { Rules: [Match.objectLike({ Status: 'Enabled', ExpirationInDays: 90, AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } })] },
    });
    const policies = template.findResources('AWS::S3::BucketPolicy');
    expect(Object.keys(policies)).toHaveLength(2);
    for (const policy of Object.values(policies)) {
      expect(JSON.stringify(policy.Properties.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
    }
  });

  test('no IAM statement allows a wildcard action', () => {
    const documents = [
      ...Object.values(template.findResources('AWS::IAM::Policy')).map((policy) => policy.Properties.PolicyDocument),
      ...Object.values(template.findResources('AWS::IAM::Role')).flatMap((role) => (role.Properties.Policies ?? []).map((policy: { PolicyDocument: unknown }) => policy.PolicyDocument)),
    ];
    expect(documents.length).toBeGreaterThan(0);
    const allowed = documents.flatMap((document) => (document as { Statement: Statement[] }).Statement).filter((statement) => statement.Effect === 'Allow');
    for (const statement of allowed) for (const action of actionsOf(statement)) expect(action, JSON.stringify(statement)).not.toContain('*');
    // Managed policies are opaque from here; none is attached.
    for (const role of Object.values(template.findResources('AWS::IAM::Role'))) expect(role.Properties.ManagedPolicyArns).toBeUndefined();
  });

  test('the worker task role reaches only its buckets and its volume', () => {
    const recipeBucket = logicalId('AWS::S3::Bucket', 'Recipes');
    const payloadBucket = logicalId('AWS::S3::Bucket', 'Payloads');
    const fileSystem = logicalId('AWS::EFS::FileSystem', 'SharedVolume');
    const statements = policyStatementsOfRole('WorkerTaskRole');
    expect(statements.length).toBeGreaterThan(0);
    for (const statement of statements) {
      expect(statement.Effect).toBe('Allow');
      const resources = JSON.stringify(statement.Resource);
      const own = [recipeBucket, payloadBucket, fileSystem].some((id) => resources.includes(id));
      expect(own, JSON.stringify(statement)).toBe(true);
      expect(resources).not.toBe('"*"');
    }
    const actions = statements.flatMap(actionsOf).sort();
    expect(actions).toEqual(['elasticfilesystem:ClientMount', 'elasticfilesystem:ClientWrite', 's3:DeleteObject', 's3:GetObject', 's3:GetObject', 's3:GetObjectVersion', 's3:ListBucket', 's3:ListBucket', 's3:ListBucketVersions', 's3:PutObject']);
    // It deletes nothing but agent memory revisions (decision 0047).
    const deleting = statements.filter((statement) => actionsOf(statement).includes('s3:DeleteObject'));
    expect(deleting.map((statement) => JSON.stringify(statement.Resource))).toEqual([expect.stringContaining('/blobs/agent-memory/*')]);
  });

  test('secrets reach the worker through the execution role, each secret by its ARN', () => {
    const secretIds = Object.keys(template.findResources('AWS::SecretsManager::Secret'));
    expect(secretIds.sort()).toEqual([expect.stringMatching(/^ApiKeyHashes/), expect.stringMatching(/^LlmKeys/), expect.stringMatching(/^TemporalCredentials/)]);
    const statements = policyStatementsOfRole('WorkerTaskExecutionRole');
    const secretStatements = statements.filter((statement) => actionsOf(statement).some((action) => action.startsWith('secretsmanager:')));
    expect(secretStatements.length).toBeGreaterThan(0);
    for (const statement of secretStatements) {
      expect(actionsOf(statement).sort()).toEqual(['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue']);
      const resources = JSON.stringify(statement.Resource);
      expect(secretIds.some((id) => resources.includes(id)), resources).toBe(true);
      // The worker never gets the API key hashes.
      expect(resources).not.toContain('ApiKeyHashes');
    }
    const container = Object.values(template.findResources('AWS::ECS::TaskDefinition'))[0]?.Properties.ContainerDefinitions[0];
    const secretNames = (container.Secrets as { Name: string }[]).map((secret) => secret.Name).sort();
    expect(secretNames).toEqual(['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'TEMPORAL_API_KEY']);
    const environment = Object.fromEntries((container.Environment as { Name: string; Value: unknown }[]).map((variable) => [variable.Name, variable.Value]));
    expect(environment.TEMPORAL_ADDRESS).toBe('errand-prod.a1b2c.tmprl.cloud:7233');
    expect(environment.TEMPORAL_NAMESPACE).toBe('errand-prod.a1b2c');
    // No secret value in plain environment variables.
    expect(Object.keys(environment).filter((name) => /KEY|CERT|SECRET/.test(name) && name !== 'ERRAND_BLOB_PREFIX')).toEqual([]);
  });

  test('the Lambda may read recipes, only the inbound-message prefix of the payload bucket, and only its secrets', () => {
    const payloadBucket = logicalId('AWS::S3::Bucket', 'Payloads');
    const statements = policyStatementsOfRole('ApiFunctionRole');
    const payloadStatements = statements.filter((statement) => JSON.stringify(statement.Resource).includes(payloadBucket));
    expect(payloadStatements).toHaveLength(2);
    for (const statement of payloadStatements) {
      const text = JSON.stringify(statement);
      if (actionsOf(statement).includes('s3:ListBucket')) expect(statement.Condition).toEqual({ StringLike: { 's3:prefix': [`${payloadPrefixes.api}*`] } });
      else expect(text).toContain(`/${payloadPrefixes.api}*`);
    }
    const secretStatements = statements.filter((statement) => actionsOf(statement).some((action) => action.startsWith('secretsmanager:')));
    const secretResources = secretStatements.map((statement) => JSON.stringify(statement.Resource)).join(' ');
    expect(secretResources).toContain('ApiKeyHashes');
    expect(secretResources).toContain('TemporalCredentials');
    expect(secretResources).not.toContain('LlmKeys');
    const logStatement = statements.find((statement) => actionsOf(statement).includes('logs:PutLogEvents'));
    expect(JSON.stringify(logStatement?.Resource)).toContain('ApiLogs');
  });

  test('log groups keep logs for the configured days; the worker mounts the shared volume', () => {
    const logGroups = Object.values(template.findResources('AWS::Logs::LogGroup'));
    expect(logGroups.length).toBeGreaterThanOrEqual(3);
    for (const group of logGroups) expect(group.Properties.RetentionInDays).toBe(30);
    template.hasResourceProperties('AWS::ECS::TaskDefinition', {
      ContainerDefinitions: [Match.objectLike({ MountPoints: [{ ContainerPath: '/mnt/errand', SourceVolume: 'shared', ReadOnly: false }] })],
      Volumes: [Match.objectLike({ EFSVolumeConfiguration: Match.objectLike({ TransitEncryption: 'ENABLED', AuthorizationConfig: Match.objectLike({ IAM: 'ENABLED' }) }) })],
    });
    template.hasResourceProperties('AWS::EFS::FileSystem', { Encrypted: true });
    template.hasResourceProperties('AWS::ECS::Service', { DesiredCount: 2, LaunchType: 'FARGATE' });
    // The worker image is staged from the repository's Dockerfile (built by `cdk deploy`, not here).
    const assets = readFileSync(join(outdir, 'ErrandTest.assets.json'), 'utf8');
    expect(assets).toContain('"dockerFile": "Dockerfile"');
    const staged = (JSON.parse(assets) as { dockerImages: Record<string, { source: { directory: string } }> }).dockerImages;
    const directory = Object.values(staged)[0]?.source.directory ?? '';
    expect(existsSync(join(outdir, directory, 'Dockerfile'))).toBe(true);
    expect(existsSync(join(outdir, directory, 'node_modules'))).toBe(false);
  });

  test('the API and the workers agree on the working root and the blob store, and model-run commands wait for a person by default', () => {
    const container = Object.values(template.findResources('AWS::ECS::TaskDefinition'))[0]?.Properties.ContainerDefinitions[0];
    const workerEnvironment = Object.fromEntries((container.Environment as { Name: string; Value: unknown }[]).map((variable) => [variable.Name, variable.Value]));
    const lambda = Object.values(template.findResources('AWS::Lambda::Function')).find((resource) => resource.Properties.Environment?.Variables?.ERRAND_SECRET_ENV !== undefined);
    const lambdaEnvironment = lambda?.Properties.Environment.Variables as Record<string, unknown>;
    // The Lambda writes <working root>/<tenant> into workflow inputs; the workers run the tools there.
    expect(lambdaEnvironment.ERRAND_WORKING_DIR).toBe(workerEnvironment.ERRAND_WORKING_DIR);
    expect(String(workerEnvironment.ERRAND_WORKING_DIR).startsWith('/mnt/errand/')).toBe(true);
    // errand's own state is not inside the working root.
    expect(String(workerEnvironment.ERRAND_DATA_DIR).startsWith(`${String(workerEnvironment.ERRAND_WORKING_DIR)}/`)).toBe(false);
    // Long messages the API stores by key are read by the workers: both use the same bucket and prefix.
    expect(lambdaEnvironment.ERRAND_BLOB_PREFIX).toBe(workerEnvironment.ERRAND_BLOB_PREFIX);
    expect(payloadPrefixes.api.startsWith(String(workerEnvironment.ERRAND_BLOB_PREFIX))).toBe(true);
    expect(JSON.parse(String(workerEnvironment.ERRAND_TOOL_POLICY))).toEqual({ default: 'allow', rules: { developer__run_command: 'ask' }, approvers: 'human' });
    expect(() => parseSettings({ temporalAddress: 'x:7233', temporalNamespace: 'x', toolPolicy: '{"default":"maybe"}' })).toThrow(/toolPolicy is not a valid tool policy: default: expected allow, ask or deny/);
  });

  test('with temporalHttpUrl the API starts through Temporal\'s HTTP API; a URL the credentials cannot use is refused at synthesis', () => {
    const lambda = Object.values(template.findResources('AWS::Lambda::Function')).find((resource) => resource.Properties.Environment?.Variables?.ERRAND_SECRET_ENV !== undefined);
    expect(lambda?.Properties.Environment.Variables.ERRAND_TEMPORAL_HTTP_URL).toBe('https://temporal-http.example.com');
    const base = { temporalAddress: 'x:7233', temporalNamespace: 'x' };
    expect(() => parseSettings({ ...base, temporalHttpUrl: 'http://temporal-http:7243' })).toThrow(/temporalHttpUrl "http:\/\/temporal-http:7243" must be https:\/\/ with temporalAuth=api-key/);
    expect(() => parseSettings({ ...base, temporalAuth: 'mtls', temporalHttpUrl: 'https://temporal-http:7243' })).toThrow(/temporalHttpUrl cannot be used with temporalAuth=mtls/);
    expect(() => parseSettings({ ...base, temporalHttpUrl: 'temporal-http:7243' })).toThrow(/temporalHttpUrl: the http\(s\) URL of Temporal's HTTP API/);
    expect(parseSettings({ ...base, temporalAuth: 'none', temporalHttpUrl: 'http://temporal-frontend.temporal.svc:7243' }).temporalHttpUrl).toBe('http://temporal-frontend.temporal.svc:7243');
  });

  test('a missing parameter is named', () => {
    expect(() => parseSettings({ temporalNamespace: 'x' })).toThrow(/temporalAddress is required: pass -c temporalAddress=/);
    expect(() => parseSettings({ temporalAddress: 'https://x:7233', temporalNamespace: 'x' })).toThrow(/temporalAddress: host:port without a scheme/);
  });
});

describe('CDK synthesis: one worker service per build (workerBuilds)', () => {
  const env = { account: '123456789012', region: 'eu-west-1' };
  const base = {
    temporalAddress: 'errand-prod.a1b2c.tmprl.cloud:7233',
    temporalNamespace: 'errand-prod.a1b2c',
    temporalAuth: 'api-key',
    llmKeyNames: 'OPENAI_API_KEY',
  };
  const olderImage = '123456789012.dkr.ecr.eu-west-1.amazonaws.com/errand-workers:2026.12.0';
  let buildsRoot: string;
  /** The stack as it was before versioning: unversioned workers only. */
  let unversioned: Template;
  /** The first versioned deploy: build A from this checkout beside the unversioned service (unversionedWorkers). */
  let first: Template;
  /** The next release: A (the image the first deploy pushed) draining beside B (this checkout). */
  let both: Template;
  /** A drained and removed: B alone. */
  let drained: Template;
  /** Three builds: an image from another repository, one from the bootstrap repository, this checkout. */
  let three: Template;

  /** The warnings of each synthesised stack, by name. */
  const warnings = new Map<string, string[]>();

  function synthesise(name: string, settings: Record<string, unknown>): Template {
    const app = new App({ outdir: mkdtempSync(join(buildsRoot, `${name}-`)) });
    const stack = new ErrandStack(app, 'ErrandTest', { env, settings: parseSettings({ ...base, ...settings }) });
    const template = Template.fromStack(stack);
    warnings.set(name, Annotations.fromStack(stack).findWarning('*', Match.anyValue()).map((warning) => `${warning.id}: ${JSON.stringify(warning.entry.data)}`));
    return template;
  }

  function resources(template: Template, logicalIdPrefix: string): Record<string, unknown> {
    const all = template.toJSON().Resources as Record<string, unknown>;
    return Object.fromEntries(Object.entries(all).filter(([id]) => id.startsWith(logicalIdPrefix)));
  }

  function outputValue(template: Template, id: string): unknown {
    const outputs = template.toJSON().Outputs as Record<string, { Value: unknown }>;
    const output = outputs[id];
    if (!output) throw new Error(`no output ${id}; outputs: ${Object.keys(outputs).join(', ')}`);
    return output.Value;
  }

  type Container = { Image: unknown; Environment: { Name: string; Value: unknown }[]; LogConfiguration: { Options: Record<string, unknown> } };
  function containerOf(template: Template, taskLogicalIdPrefix: string): Container {
    const tasks = Object.values(resources(template, taskLogicalIdPrefix)).filter((resource) => (resource as { Type: string }).Type === 'AWS::ECS::TaskDefinition');
    expect(tasks).toHaveLength(1);
    return (tasks[0] as { Properties: { ContainerDefinitions: Container[] } }).Properties.ContainerDefinitions[0] as Container;
  }

  function environmentOf(container: Container): Record<string, unknown> {
    return Object.fromEntries(container.Environment.map((variable) => [variable.Name, variable.Value]));
  }

  beforeAll(() => {
    buildsRoot = mkdtempSync(join(tmpdir(), 'errand-cdk-builds-'));
    unversioned = synthesise('unversioned', {});
    first = synthesise('first', { workerBuilds: JSON.stringify([{ buildId: '2026.12.1' }]), unversionedWorkers: 'true' });
    const imageA = outputValue(first, 'WorkerImage2026121');
    expect(typeof imageA).toBe('string');
    both = synthesise('both', { workerBuilds: JSON.stringify([{ buildId: '2026.12.1', image: imageA }, { buildId: '2026.12.2', count: 3 }]) });
    // Run from B's checkout, as the deploy that added B was.
    drained = synthesise('drained', { workerBuilds: JSON.stringify([{ buildId: '2026.12.2', count: 3 }]) });
    // From cdk.json the parameter is an array, not a string.
    three = synthesise('three', { workerDeploymentName: 'errand-prod', workerBuilds: [{ buildId: '2026.12.0', image: olderImage, count: 1 }, { buildId: '2026.12.1', image: imageA }, { buildId: 'b7c1e2f' }] });
  }, 240_000);

  afterAll(() => {
    if (buildsRoot) rmSync(buildsRoot, { recursive: true, force: true });
  });

  test('two builds run as two services, each polling as its version with its own image and count, sharing roles, volume, logs and secrets', () => {
    const services = both.findResources('AWS::ECS::Service');
    expect(Object.keys(services).sort()).toEqual([expect.stringMatching(/^WorkerBuild2026121Service/), expect.stringMatching(/^WorkerBuild2026122Service/)]);
    // No unversioned service once versioning is on.
    expect(resources(both, 'Workers')).toEqual({});
    expect(resources(both, 'WorkerTaskExecutionRole')).toEqual({});
    expect(Object.keys(both.findResources('AWS::ECS::TaskDefinition')).sort()).toEqual([expect.stringMatching(/^WorkerBuild2026121Task/), expect.stringMatching(/^WorkerBuild2026122Task/)]);
    const counts = Object.fromEntries(Object.entries(services).map(([id, service]) => [id.slice(0, 'WorkerBuild2026121'.length), service.Properties.DesiredCount]));
    expect(counts).toEqual({ WorkerBuild2026121: 2, WorkerBuild2026122: 3 });

    const containerA = containerOf(both, 'WorkerBuild2026121Task');
    const containerB = containerOf(both, 'WorkerBuild2026122Task');
    expect(environmentOf(containerA)).toMatchObject({ ERRAND_WORKER_DEPLOYMENT_NAME: 'errand', ERRAND_WORKER_BUILD_ID: '2026.12.1', TEMPORAL_ADDRESS: 'errand-prod.a1b2c.tmprl.cloud:7233' });
    expect(environmentOf(containerB)).toMatchObject({ ERRAND_WORKER_DEPLOYMENT_NAME: 'errand', ERRAND_WORKER_BUILD_ID: '2026.12.2', TEMPORAL_ADDRESS: 'errand-prod.a1b2c.tmprl.cloud:7233' });
    // A runs the image the first deploy pushed; B the one this checkout builds, which the stack outputs.
    expect(containerA.Image).toBe(outputValue(first, 'WorkerImage2026121'));
    expect(containerB.Image).toBe(outputValue(both, 'WorkerImage2026122'));
    expect(String(containerB.Image)).toMatch(/^123456789012\.dkr\.ecr\.eu-west-1\.amazonaws\.com\/cdk-hnb659fds-container-assets-123456789012-eu-west-1:[0-9a-f]{64}$/);
    expect(() => outputValue(both, 'WorkerImage2026121')).toThrow(/no output WorkerImage2026121/);
    for (const id of ['2026121', '2026122']) expect(outputValue(both, `WorkerService${id}`)).toEqual({ 'Fn::GetAtt': [expect.stringMatching(new RegExp(`^WorkerBuild${id}Service`)), 'Name'] });
    // Each build's log streams say which build wrote them.
    expect(containerA.LogConfiguration.Options['awslogs-stream-prefix']).toBe('worker-2026.12.1');
    expect(containerB.LogConfiguration.Options['awslogs-stream-prefix']).toBe('worker-2026.12.2');

    // Shared: one task role, one execution role, one security group, one log group, the same secrets and volume.
    const tasks = Object.values(both.findResources('AWS::ECS::TaskDefinition'));
    expect(tasks).toHaveLength(2);
    for (const property of ['TaskRoleArn', 'ExecutionRoleArn', 'Volumes']) expect(tasks[1]?.Properties[property]).toEqual(tasks[0]?.Properties[property]);
    expect(JSON.stringify(tasks[0]?.Properties.ExecutionRoleArn)).toContain('WorkerExecutionRole');
    expect(Object.keys(both.findResources('AWS::IAM::Role')).filter((id) => id.startsWith('Worker')).sort()).toEqual([expect.stringMatching(/^WorkerExecutionRole/), expect.stringMatching(/^WorkerTaskRole/)]);
    const securityGroups = Object.values(services).map((service) => JSON.stringify(service.Properties.NetworkConfiguration.AwsvpcConfiguration.SecurityGroups));
    expect(new Set(securityGroups).size).toBe(1);
    expect(securityGroups[0]).toContain('WorkerSecurityGroup');
    expect(containerA.LogConfiguration.Options['awslogs-group']).toEqual(containerB.LogConfiguration.Options['awslogs-group']);
    const secretsOf = (container: Container) => (container as unknown as { Secrets: unknown }).Secrets;
    expect(secretsOf(containerA)).toEqual(secretsOf(containerB));
    both.hasResourceProperties('AWS::EC2::SecurityGroupIngress', { FromPort: 2049, ToPort: 2049, SourceSecurityGroupId: { 'Fn::GetAtt': [Match.stringLikeRegexp('^WorkerSecurityGroup'), 'GroupId'] } });
  });

  test('adding build B leaves build A as it was, and removing A leaves B as it was', () => {
    const buildA = resources(first, 'WorkerBuild2026121');
    expect(Object.keys(buildA).length).toBeGreaterThanOrEqual(2);
    // Same logical ids, same properties: CloudFormation leaves A's task definition and service alone.
    expect(resources(both, 'WorkerBuild2026121')).toEqual(buildA);
    const buildB = resources(both, 'WorkerBuild2026122');
    expect(Object.keys(buildB).length).toBeGreaterThanOrEqual(2);
    expect(resources(drained, 'WorkerBuild2026122')).toEqual(buildB);
    expect(resources(drained, 'WorkerBuild2026121')).toEqual({});
    // The shared pieces keep their ids across all three deploys.
    for (const prefix of ['WorkerExecutionRole', 'WorkerSecurityGroup', 'WorkerTaskRole', 'WorkerLogs']) {
      const ids = [first, both, drained].map((template) => Object.keys(resources(template, prefix)).sort());
      expect(ids[0]?.length).toBeGreaterThan(0);
      expect(ids[1]).toEqual(ids[0]);
      expect(ids[2]).toEqual(ids[0]);
    }
  });

  test('the first versioned deploy keeps the unversioned service exactly as it was beside build A', () => {
    const before = { ...resources(unversioned, 'Workers'), ...resources(unversioned, 'WorkerTask') };
    expect(Object.keys(before).some((id) => id.startsWith('Workers'))).toBe(true);
    expect(Object.keys(before).some((id) => id.startsWith('WorkerTaskExecutionRole'))).toBe(true);
    // The task role is shared by every worker; the unversioned service's own resources are untouched.
    const own = (template: Template) => Object.fromEntries(Object.entries({ ...resources(template, 'Workers'), ...resources(template, 'WorkerTask') }).filter(([id]) => !id.startsWith('WorkerTaskRole')));
    expect(own(first)).toEqual(own(unversioned));
    const unversionedContainer = containerOf(first, 'WorkerTask');
    expect(environmentOf(unversionedContainer).ERRAND_WORKER_BUILD_ID).toBeUndefined();
    expect(Object.keys(first.findResources('AWS::ECS::Service'))).toHaveLength(2);
    expect(environmentOf(containerOf(first, 'WorkerBuild2026121Task')).ERRAND_WORKER_BUILD_ID).toBe('2026.12.1');
  });

  test('an older build\'s ECR image may be pulled by the shared execution role; the deployment name reaches every build', () => {
    expect(Object.keys(three.findResources('AWS::ECS::Service'))).toHaveLength(3);
    const older = containerOf(three, 'WorkerBuild2026120Task');
    expect(older.Image).toBe(olderImage);
    const current = containerOf(three, 'WorkerBuildb7c1e2fTask');
    for (const container of [older, current, containerOf(three, 'WorkerBuild2026121Task')]) expect(environmentOf(container).ERRAND_WORKER_DEPLOYMENT_NAME).toBe('errand-prod');
    const pull = Object.values(three.findResources('AWS::IAM::Policy'))
      .filter((policy) => JSON.stringify(policy.Properties.Roles).includes('WorkerExecutionRole'))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Statement[])
      .filter((statement) => actionsOf(statement).includes('ecr:BatchGetImage'))
      .map((statement) => JSON.stringify(statement.Resource));
    expect(pull.some((resource) => resource.includes(':ecr:eu-west-1:123456789012:repository/errand-workers'))).toBe(true);
    expect(pull.some((resource) => resource.includes(':ecr:eu-west-1:123456789012:repository/cdk-hnb659fds-container-assets-123456789012-eu-west-1'))).toBe(true);
  });

  test('`cdk synth` shows no warning: the pull rights CDK asks for on an ECR image named by URI are granted', () => {
    for (const name of ['first', 'both', 'drained', 'three']) expect(warnings.get(name), name).toEqual([]);
    const pulls = Object.values(three.findResources('AWS::IAM::Policy'))
      .filter((policy) => JSON.stringify(policy.Properties.Roles).includes('WorkerExecutionRole'))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement as { Action: string | string[]; Resource: unknown }[])
      .filter((statement) => [statement.Action].flat().includes('ecr:BatchGetImage'));
    // The bootstrap's image repository (this checkout's build and A) and the other repository (the oldest build).
    expect(pulls.map((statement) => JSON.stringify(statement.Resource)).join(' ')).toContain('repository/errand-workers');
    expect(pulls.length).toBeGreaterThanOrEqual(2);
  });

  test('bad workerBuilds are refused at synthesis, naming the key and what is valid', () => {
    const parse = (workerBuilds: unknown, extra: Record<string, unknown> = {}) => () => parseSettings({ ...base, workerBuilds, ...extra });
    expect(parse('[{"buildId":"a"},{"buildId":"a","image":"ghcr.io/acme/errand:1"}]')).toThrow(/workerBuilds\.1\.buildId: build id "a" appears twice/);
    expect(parse('[{"buildId":"1.2","image":"ghcr.io/acme/errand:1"},{"buildId":"1-2"}]')).toThrow(/workerBuilds\.1\.buildId: build ids "1\.2" and "1-2" differ only in punctuation/);
    expect(parse('[{"buildId":"a","image":"ghcr.io/acme/errand:1"}]')).toThrow(/workerBuilds: exactly one build has no "image": the build made from this checkout/);
    expect(parse('[{"buildId":"a"},{"buildId":"b"}]')).toThrow(/workerBuilds: exactly one build has no "image", but "a" and "b" have none/);
    expect(parse('[{"buildId":"a.b/c"}]')).toThrow(/workerBuilds\.0\.buildId: use letters, digits, "\.", "-", "_" and "\+", starting with a letter or digit/);
    expect(parse('[{"buildId":".a"}]')).toThrow(/workerBuilds\.0\.buildId: use letters, digits/);
    expect(parse([{ buildId: 'x'.repeat(256) }])).toThrow(/workerBuilds\.0\.buildId: at most 255 characters/);
    expect(parse([{ buildId: 7 }])).toThrow(/workerBuilds\.0\.buildId: the worker build id \(ERRAND_WORKER_BUILD_ID\)/);
    for (const image of ['not an image', 'ghcr.io/acme/errand', 'ghcr.io/Acme/errand:1', 'https://ghcr.io/acme/errand:1', 'ghcr.io/acme/errand:-1']) {
      expect(parse([{ buildId: 'a', image }, { buildId: 'b' }]), image).toThrow(/workerBuilds\.0\.image: not an image reference: use an image reference with a tag or digest/);
    }
    expect(parse([{ buildId: 'a', image: `ghcr.io/acme/errand@sha256:${'a'.repeat(64)}` }, { buildId: 'b' }])().workerBuilds).toEqual([{ buildId: 'a', image: `ghcr.io/acme/errand@sha256:${'a'.repeat(64)}` }, { buildId: 'b' }]);
    expect(parse([{ buildId: 'a', count: 101 }])).toThrow(/workerBuilds\.0\.count: /);
    expect(parse([{ buildId: 'a', replicas: 2 }])).toThrow(/workerBuilds\.0: Unrecognized key: "replicas"/);
    expect(parse('[{"buildId":"a"}')).toThrow(/workerBuilds: not valid JSON \(.*\): use an array such as/);
    expect(parse('{"buildId":"a"}')).toThrow(/workerBuilds: a JSON array of \{"buildId"/);
    expect(parse('[]')).toThrow(/workerBuilds: at least one build/);
    expect(parse(undefined, { workerDeploymentName: 'errand-prod' })).toThrow(/workerDeploymentName="errand-prod" is set but workerBuilds is not/);
    expect(parse(undefined, { workerDeploymentName: 'errand.prod' })).toThrow(/workerDeploymentName: the worker deployment name \(ERRAND_WORKER_DEPLOYMENT_NAME\): use letters, digits, "-" and "_"/);
    expect(parse(undefined, { unversionedWorkers: 'true' })).toThrow(/unversionedWorkers=true needs workerBuilds/);
    expect(parse('[{"buildId":"a"}]', { unversionedWorkers: 'yes' })).toThrow(/unversionedWorkers: true or false/);
    // A stack without an account and region cannot name the image the next deploy repeats.
    const app = new App({ outdir: mkdtempSync(join(buildsRoot, 'agnostic-')) });
    expect(() => new ErrandStack(app, 'ErrandAgnostic', { settings: parseSettings({ ...base, workerBuilds: '[{"buildId":"a"}]' }) })).toThrow(/workerBuilds needs the stack's account and region at synthesis/);
  });
});
