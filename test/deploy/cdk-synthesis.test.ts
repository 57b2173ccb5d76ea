import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
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
    expect(actions).toEqual(['elasticfilesystem:ClientMount', 'elasticfilesystem:ClientWrite', 's3:GetObject', 's3:GetObject', 's3:GetObjectVersion', 's3:ListBucket', 's3:ListBucket', 's3:ListBucketVersions', 's3:PutObject']);
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
