import { join, resolve } from 'node:path';
import { Annotations, Aws, CfnOutput, Duration, RemovalPolicy, Stack, Stage, Token, type StackProps } from 'aws-cdk-lib';
import { type CfnStage, HttpApi, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { Repository } from 'aws-cdk-lib/aws-ecr';
import { DockerImageAsset, Platform } from 'aws-cdk-lib/aws-ecr-assets';
import { GatewayVpcEndpointAwsService, Port, SecurityGroup, SubnetType, Vpc } from 'aws-cdk-lib/aws-ec2';
import {
  Cluster,
  ContainerImage,
  CpuArchitecture,
  FargateService,
  type FargateServiceProps,
  FargateTaskDefinition,
  type FargateTaskDefinitionProps,
  LogDrivers,
  OperatingSystemFamily,
  Secret as EcsSecret,
} from 'aws-cdk-lib/aws-ecs';
import { FileSystem, PerformanceMode, ThroughputMode } from 'aws-cdk-lib/aws-efs';
import { Effect, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Code, Function as LambdaFunction, ParamsAndSecretsLayerVersion, ParamsAndSecretsVersions, Runtime } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { RegionInfo } from 'aws-cdk-lib/region-info';
import { Construct } from 'constructs';
import { apiBundleHandler, buildApiBundle } from './api-bundle';
import { apiFunctionEnvironment, sharedEnvironment } from './api-function-environment';
import { TemporalAuth, type ErrandSettings } from './settings';
import { buildIdKey, parseImageReference, type WorkerBuild } from './worker-builds';

/** The repository root: the Docker build context and the Lambda bundling root. */
export const repositoryRoot = resolve(__dirname, '..', '..');

/** Where the shared volume is mounted in every worker (ADR 0003: the same path on every worker). */
export const sharedVolumePath = '/mnt/errand';

/**
 * The working root, in the workers' file system. The API (Lambda) writes `<working root>/<tenant>` into
 * workflow inputs without touching any disk, so it must be given the workers' path, not one of its own.
 */
export const workingRoot = `${sharedVolumePath}/work`;

/** Key prefixes of the payload bucket. The API may touch only its own. */
export const payloadPrefixes = {
  /** The worker's blob store: conversations, model responses. */
  worker: 'blobs/',
  /** Long messages the API stores for workers (by key; inside the workers' blob store, which reads them). */
  api: 'blobs/inbound/',
} as const;

/** Key prefix of recipes in the recipe bucket (an S3 source store, SEMANTICS §1). */
export const recipePrefix = 'recipes/';

/** What every worker build shares with the others (and with the unversioned service). */
interface WorkerBuildsShared {
  vpc: Vpc;
  fileSystem: FileSystem;
  taskDefinitionProps: Omit<FargateTaskDefinitionProps, 'executionRole'>;
  serviceProps: Omit<FargateServiceProps, 'taskDefinition'>;
  addWorkerContainer: (taskDefinition: FargateTaskDefinition, image: ContainerImage, streamPrefix: string, environment: Record<string, string>) => void;
}

/** Props of {@link ErrandStack}. */
export interface ErrandStackProps extends StackProps {
  settings: ErrandSettings;
}

/**
 * errand on AWS: an HTTP API (API Gateway → Lambda) that starts and inspects delegations, Fargate
 * services of workers that run them (one unversioned service, or one per worker build with `workerBuilds`),
 * buckets for recipes and large payloads, an EFS volume every worker mounts for working directories and
 * local state, and the secrets both read.
 *
 * Least privilege, by construction: every IAM statement names its actions one by one (no `*` action)
 * and its resources (buckets, prefixes, secrets, log groups); the only `*` resources are the ones AWS
 * defines no resource for (`ecr:GetAuthorizationToken`, added by CDK for the image pull).
 */
export class ErrandStack extends Stack {
  readonly api: HttpApi;
  readonly recipeBucket: Bucket;
  readonly payloadBucket: Bucket;

  constructor(scope: Construct, id: string, props: ErrandStackProps) {
    super(scope, id, props);
    const { settings } = props;
    const retention = settings.logRetentionDays as RetentionDays;

    // ---- storage -------------------------------------------------------------------------------------
    const bucketDefaults = {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      // Recipes and conversations outlive a stack; deleting the stack must not delete them.
      removalPolicy: RemovalPolicy.RETAIN,
    };
    this.recipeBucket = new Bucket(this, 'Recipes', { ...bucketDefaults, versioned: true });
    this.payloadBucket = new Bucket(this, 'Payloads', {
      ...bucketDefaults,
      lifecycleRules: [
        { id: 'expire-payloads', expiration: Duration.days(settings.payloadExpirationDays), abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
    });

    // ---- secrets (values are put after the first deploy; see docs/deploy.md) ------------------------------
    const temporalSecret =
      settings.temporalAuth === TemporalAuth.none
        ? undefined
        : new Secret(this, 'TemporalCredentials', {
            description: `errand: Temporal ${settings.temporalAuth === TemporalAuth.apiKey ? 'API key (field apiKey)' : 'mTLS client certificate and key, PEM (fields tlsCert, tlsKey)'}`,
            // A placeholder with the right fields, so the worker starts (and fails to authenticate, loudly)
            // rather than failing to start because a field is missing.
            generateSecretString:
              settings.temporalAuth === TemporalAuth.apiKey
                ? { secretStringTemplate: '{}', generateStringKey: 'apiKey' }
                : { secretStringTemplate: JSON.stringify({ tlsCert: 'replace with the PEM certificate' }), generateStringKey: 'tlsKey' },
          });
    const llmSecret =
      settings.llmKeyNames.length === 0
        ? undefined
        : new Secret(this, 'LlmKeys', {
            description: `errand: LLM provider keys, one field per variable (${settings.llmKeyNames.join(', ')})`,
            generateSecretString: { secretStringTemplate: JSON.stringify(Object.fromEntries(settings.llmKeyNames.slice(1).map((name) => [name, 'replace me']))), generateStringKey: settings.llmKeyNames[0] ?? 'unused' },
          });
    const apiKeysSecret = new Secret(this, 'ApiKeyHashes', {
      description: 'errand: ERRAND_API_KEYS, a JSON array of {"tenant": "...", "sha256": "<hash of the key>"}',
      generateSecretString: { secretStringTemplate: '{}', generateStringKey: 'placeholder' },
    });

    /** Temporal credentials as variable → secret field. */
    const temporalSecretFields: Record<string, string> =
      settings.temporalAuth === TemporalAuth.apiKey
        ? { TEMPORAL_API_KEY: 'apiKey' }
        : settings.temporalAuth === TemporalAuth.mtls
          ? { TEMPORAL_TLS_CLIENT_CERT_DATA: 'tlsCert', TEMPORAL_TLS_CLIENT_KEY_DATA: 'tlsKey' }
          : {};
    const temporalEnvironment = sharedEnvironment(
      settings,
      this.toJsonString([{ type: 's3', bucket: this.recipeBucket.bucketName, prefix: recipePrefix, region: this.region }]),
    );

    // ---- network and the shared volume ------------------------------------------------------------------
    const vpc = new Vpc(this, 'Network', {
      maxAzs: 2,
      natGateways: settings.natGateways,
      subnetConfiguration: [
        { name: 'public', subnetType: SubnetType.PUBLIC, cidrMask: 24 },
        { name: 'workers', subnetType: settings.natGateways > 0 ? SubnetType.PRIVATE_WITH_EGRESS : SubnetType.PUBLIC, cidrMask: 22 },
      ].filter((subnet, index, all) => all.findIndex((other) => other.subnetType === subnet.subnetType) === index),
    });
    // S3 traffic stays on the AWS network and skips the NAT gateway's per-GB charge.
    vpc.addGatewayEndpoint('S3Endpoint', { service: GatewayVpcEndpointAwsService.S3 });
    const workerSubnets = { subnetType: settings.natGateways > 0 ? SubnetType.PRIVATE_WITH_EGRESS : SubnetType.PUBLIC };

    const fileSystem = new FileSystem(this, 'SharedVolume', {
      vpc,
      vpcSubnets: workerSubnets,
      encrypted: true,
      performanceMode: PerformanceMode.GENERAL_PURPOSE,
      throughputMode: ThroughputMode.ELASTIC,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // The container runs as the image's `node` user (uid 1000); the access point pins that identity so
    // files written by any worker are owned alike.
    const accessPoint = fileSystem.addAccessPoint('WorkerAccess', {
      path: '/errand',
      posixUser: { uid: '1000', gid: '1000' },
      createAcl: { ownerUid: '1000', ownerGid: '1000', permissions: '750' },
    });

    // ---- the worker service -------------------------------------------------------------------------------
    const cluster = new Cluster(this, 'Cluster', { vpc });
    const workerLogs = new LogGroup(this, 'WorkerLogs', { retention, removalPolicy: RemovalPolicy.DESTROY });
    const taskRole = new Role(this, 'WorkerTaskRole', {
      assumedBy: new ServicePrincipal('ecs-tasks.amazonaws.com'),
      description: 'errand worker: its buckets, its volume',
    });
    const taskDefinitionProps = {
      cpu: settings.workerCpu,
      memoryLimitMiB: settings.workerMemoryMiB,
      taskRole,
      runtimePlatform: { cpuArchitecture: CpuArchitecture.X86_64, operatingSystemFamily: OperatingSystemFamily.LINUX },
      volumes: [
        {
          name: 'shared',
          efsVolumeConfiguration: {
            fileSystemId: fileSystem.fileSystemId,
            transitEncryption: 'ENABLED',
            authorizationConfig: { accessPointId: accessPoint.accessPointId, iam: 'ENABLED' },
          },
        },
      ],
    };
    const secrets: Record<string, EcsSecret> = {};
    if (temporalSecret) for (const [variable, field] of Object.entries(temporalSecretFields)) secrets[variable] = EcsSecret.fromSecretsManager(temporalSecret, field);
    if (llmSecret) for (const name of settings.llmKeyNames) secrets[name] = EcsSecret.fromSecretsManager(llmSecret, name);
    const workerEnvironment = {
      ...temporalEnvironment,
      ERRAND_DATA_DIR: `${sharedVolumePath}/state`,
      ERRAND_WORKING_DIR: workingRoot,
      ERRAND_TOOL_POLICY: settings.toolPolicy,
      ERRAND_BLOB_BUCKET: this.payloadBucket.bucketName,
      ERRAND_BLOB_PREFIX: payloadPrefixes.worker,
      AWS_REGION: this.region,
    };
    const addWorkerContainer = (taskDefinition: FargateTaskDefinition, image: ContainerImage, streamPrefix: string, environment: Record<string, string>): void => {
      const container = taskDefinition.addContainer('worker', {
        image,
        logging: LogDrivers.awsLogs({ logGroup: workerLogs, streamPrefix }),
        environment: { ...workerEnvironment, ...environment },
        secrets,
        // Temporal redelivers the work of a stopped worker; the grace period lets running activities finish.
        stopTimeout: Duration.seconds(120),
      });
      container.addMountPoints({ containerPath: sharedVolumePath, sourceVolume: 'shared', readOnly: false });
    };
    const serviceProps = {
      cluster,
      vpcSubnets: workerSubnets,
      assignPublicIp: settings.natGateways === 0,
      // Rolling deploys keep every old worker until its replacement runs, so polling never pauses.
      minHealthyPercent: 100,
      maxHealthyPercent: 200,
      circuitBreaker: { rollback: true },
    };

    if (settings.workerBuilds === undefined || settings.unversionedWorkers) {
      // Unversioned workers, replaced in place on every deploy: the stack as it was before versioning, with
      // the same construct ids, so turning versioning on touches nothing until the operator asks for it.
      const taskDefinition = new FargateTaskDefinition(this, 'WorkerTask', taskDefinitionProps);
      // Built from the repository's Dockerfile by `cdk deploy` (synthesis only stages the context).
      addWorkerContainer(taskDefinition, ContainerImage.fromAsset(repositoryRoot, { file: 'Dockerfile', platform: Platform.LINUX_AMD64 }), 'worker', {});
      const service = new FargateService(this, 'Workers', { ...serviceProps, taskDefinition, desiredCount: settings.workerCount });
      fileSystem.connections.allowFrom(service, Port.tcp(2049), 'NFS from errand workers');
    }
    if (settings.workerBuilds !== undefined) this.addWorkerBuilds(settings, settings.workerBuilds, { vpc, fileSystem, taskDefinitionProps, serviceProps, addWorkerContainer });

    taskRole.addToPolicy(
      new PolicyStatement({
        sid: 'SharedVolume',
        actions: ['elasticfilesystem:ClientMount', 'elasticfilesystem:ClientWrite'],
        resources: [fileSystem.fileSystemArn],
        conditions: { StringEquals: { 'elasticfilesystem:AccessPointArn': accessPoint.accessPointArn } },
      }),
    );
    taskRole.addToPolicy(new PolicyStatement({ sid: 'PayloadObjects', actions: ['s3:GetObject', 's3:PutObject'], resources: [this.payloadBucket.arnForObjects('*')] }));
    // An agent memory file keeps its last revisions; a write deletes older ones (decision 0047): only those keys
    // (`agentMemoryKeyPrefix`, src/activities/agent-memory.ts).
    taskRole.addToPolicy(new PolicyStatement({ sid: 'MemoryRevisionsPruned', actions: ['s3:DeleteObject'], resources: [this.payloadBucket.arnForObjects(`${payloadPrefixes.worker}agent-memory/*`)] }));
    taskRole.addToPolicy(new PolicyStatement({ sid: 'PayloadList', actions: ['s3:ListBucket'], resources: [this.payloadBucket.bucketArn] }));
    taskRole.addToPolicy(new PolicyStatement({ sid: 'RecipeObjects', actions: ['s3:GetObject', 's3:GetObjectVersion'], resources: [this.recipeBucket.arnForObjects('*')] }));
    taskRole.addToPolicy(new PolicyStatement({ sid: 'RecipeList', actions: ['s3:ListBucket', 's3:ListBucketVersions'], resources: [this.recipeBucket.bucketArn] }));

    // ---- the API ---------------------------------------------------------------------------------------------
    const apiLogs = new LogGroup(this, 'ApiLogs', { retention, removalPolicy: RemovalPolicy.DESTROY });
    const accessLogs = new LogGroup(this, 'ApiAccessLogs', { retention, removalPolicy: RemovalPolicy.DESTROY });
    // An explicit role instead of the managed AWSLambdaBasicExecutionRole, whose log rights cover every group.
    const apiRole = new Role(this, 'ApiFunctionRole', { assumedBy: new ServicePrincipal('lambda.amazonaws.com'), description: 'errand API: its log group, recipes, the inbound messages of the payload bucket, its secrets' });
    apiRole.addToPolicy(new PolicyStatement({ sid: 'Logs', actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [apiLogs.logGroupArn] }));
    apiRole.addToPolicy(new PolicyStatement({ sid: 'RecipeObjects', actions: ['s3:GetObject', 's3:GetObjectVersion'], resources: [this.recipeBucket.arnForObjects('*')] }));
    apiRole.addToPolicy(new PolicyStatement({ sid: 'RecipeList', actions: ['s3:ListBucket'], resources: [this.recipeBucket.bucketArn] }));
    apiRole.addToPolicy(new PolicyStatement({ sid: 'ApiPayloadObjects', actions: ['s3:GetObject', 's3:PutObject'], resources: [this.payloadBucket.arnForObjects(`${payloadPrefixes.api}*`)] }));
    apiRole.addToPolicy(
      new PolicyStatement({
        sid: 'ApiPayloadList',
        effect: Effect.ALLOW,
        actions: ['s3:ListBucket'],
        resources: [this.payloadBucket.bucketArn],
        conditions: { StringLike: { 's3:prefix': [`${payloadPrefixes.api}*`] } },
      }),
    );

    const secretEnv: Record<string, { secretId: string; jsonKey?: string }> = { ERRAND_API_KEYS: { secretId: apiKeysSecret.secretArn } };
    if (temporalSecret) for (const [variable, field] of Object.entries(temporalSecretFields)) secretEnv[variable] = { secretId: temporalSecret.secretArn, jsonKey: field };
    // The bundle the bench measures and the Lambda runtime test runs (infra/lib/api-bundle.ts), built with the
    // local esbuild while the stack is constructed: synthesis needs neither Docker nor the network.
    const apiBundle = buildApiBundle(join(Stage.of(this)?.outdir ?? repositoryRoot, '.api-bundle', this.stackName));
    const apiFunction = new LambdaFunction(this, 'ApiFunction', {
      code: Code.fromAsset(apiBundle.directory),
      handler: apiBundleHandler,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: 512,
      // API Gateway ends an HTTP API integration at 30 s; `?wait=` is capped below that by ERRAND_API_MAX_WAIT_MS.
      timeout: Duration.seconds(29),
      role: apiRole,
      logGroup: apiLogs,
      paramsAndSecrets: ParamsAndSecretsLayerVersion.fromVersion(ParamsAndSecretsVersions.V1_0_103, { cacheSize: 10 }),
      environment: apiFunctionEnvironment({
        temporal: temporalEnvironment,
        secretEnv: this.toJsonString(secretEnv),
        workingRoot,
        payloadBucket: this.payloadBucket.bucketName,
        payloadPrefix: payloadPrefixes.worker,
      }),
    });
    for (const secret of [apiKeysSecret, ...(temporalSecret ? [temporalSecret] : [])]) {
      apiRole.addToPolicy(new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [secret.secretArn] }));
    }

    this.api = new HttpApi(this, 'HttpApi', {
      description: 'errand HTTP API',
      defaultIntegration: new HttpLambdaIntegration('ApiIntegration', apiFunction),
      createDefaultStage: true,
    });
    const stage = this.api.defaultStage;
    if (stage) {
      // Access logs through the L1 stage: the default stage is created by HttpApi itself.
      const cfnStage = stage.node.defaultChild as CfnStage;
      const destination = new LogGroupLogDestination(accessLogs).bind(stage);
      cfnStage.accessLogSettings = {
        destinationArn: destination.destinationArn,
        format: JSON.stringify({ requestId: '$context.requestId', ip: '$context.identity.sourceIp', method: '$context.httpMethod', path: '$context.path', status: '$context.status', latencyMs: '$context.responseLatency', integrationError: '$context.integrationErrorMessage' }),
      };
    }

    new CfnOutput(this, 'ApiUrl', { value: this.api.apiEndpoint, description: 'Base URL of the errand HTTP API' });
    new CfnOutput(this, 'RecipeBucketName', { value: this.recipeBucket.bucketName, description: `Put recipes under s3://<bucket>/${recipePrefix}` });
    new CfnOutput(this, 'PayloadBucketName', { value: this.payloadBucket.bucketName });
    new CfnOutput(this, 'ApiKeyHashesSecret', { value: apiKeysSecret.secretArn, description: 'Put ERRAND_API_KEYS (JSON array of {tenant, sha256}) here' });
    if (temporalSecret) new CfnOutput(this, 'TemporalCredentialsSecret', { value: temporalSecret.secretArn });
    if (llmSecret) new CfnOutput(this, 'LlmKeysSecret', { value: llmSecret.secretArn });
    new CfnOutput(this, 'WorkerLogGroup', { value: workerLogs.logGroupName });
  }

  /**
   * One service (and task definition) per worker build, each polling as `<workerDeploymentName>` /
   * `<buildId>` (decision 0034). Construct ids come from the build id alone, so adding or removing a build
   * leaves the others' resources as they were; an older build runs the image an earlier deploy pushed.
   */
  private addWorkerBuilds(settings: ErrandSettings, builds: readonly WorkerBuild[], shared: WorkerBuildsShared): void {
    if (Token.isUnresolved(this.account) || Token.isUnresolved(this.region)) {
      throw new Error(
        'workerBuilds needs the stack\'s account and region at synthesis, so that each build\'s image URI is a literal the next deploy can repeat unchanged: run cdk with AWS credentials (it sets CDK_DEFAULT_ACCOUNT and CDK_DEFAULT_REGION), or set both',
      );
    }
    // Shared by every build: rights do not depend on the code's version.
    const executionRole = new Role(this, 'WorkerExecutionRole', { assumedBy: new ServicePrincipal('ecs-tasks.amazonaws.com'), description: 'errand workers of every build: pull their images, read their secrets, write their logs' });
    const securityGroup = new SecurityGroup(this, 'WorkerSecurityGroup', { vpc: shared.vpc, description: 'errand workers of every build', allowAllOutbound: true });
    shared.fileSystem.connections.allowFrom(securityGroup, Port.tcp(2049), 'NFS from errand workers of every build');

    for (const build of builds) {
      const scope = new Construct(this, `WorkerBuild-${build.buildId}`);
      let image: ContainerImage;
      if (build.image === undefined) {
        // Built from the repository's Dockerfile by `cdk deploy` and pushed to the bootstrap's image repository.
        const asset = new DockerImageAsset(this, 'WorkerImage', { directory: repositoryRoot, file: 'Dockerfile', platform: Platform.LINUX_AMD64 });
        asset.repository.grantPull(executionRole);
        const imageUri = `${this.account}.dkr.ecr.${this.region}.${RegionInfo.get(this.region).domainSuffix ?? 'amazonaws.com'}/${this.literal(asset.repository.repositoryName, 'the image repository name')}:${asset.imageTag}`;
        // The same literal the next deploy gives back as this build's "image": its task definition stays as it is.
        image = ContainerImage.fromRegistry(imageUri);
        new CfnOutput(this, `WorkerImage${buildIdKey(build.buildId)}`, { value: imageUri, description: `Image of worker build "${build.buildId}": its "image" in workerBuilds while it drains after the next deploy` });
      } else {
        image = ContainerImage.fromRegistry(build.image);
        const ecr = parseImageReference(build.image)?.ecr;
        if (ecr) {
          Repository.fromRepositoryAttributes(scope, 'Repository', {
            repositoryArn: `arn:${Aws.PARTITION}:ecr:${ecr.region}:${ecr.account}:repository/${ecr.repositoryName}`,
            repositoryName: ecr.repositoryName,
          }).grantPull(executionRole);
        }
      }
      if (build.image === undefined || parseImageReference(build.image)?.ecr) {
        // CDK warns on any ECR image given by URI; the pull is granted to the execution role just above.
        Annotations.of(scope).acknowledgeWarning('@aws-cdk/aws-ecs:ecrImageRequiresPolicy', 'the shared worker execution role is granted pull on this build\'s image repository');
      }
      const taskDefinition = new FargateTaskDefinition(scope, 'Task', { ...shared.taskDefinitionProps, executionRole });
      shared.addWorkerContainer(taskDefinition, image, `worker-${build.buildId}`, { ERRAND_WORKER_DEPLOYMENT_NAME: settings.workerDeploymentName, ERRAND_WORKER_BUILD_ID: build.buildId });
      const service = new FargateService(scope, 'Service', { ...shared.serviceProps, taskDefinition, desiredCount: build.count ?? settings.workerCount, securityGroups: [securityGroup] });
      new CfnOutput(this, `WorkerService${buildIdKey(build.buildId)}`, { value: service.serviceName, description: `ECS service of worker build "${build.buildId}"` });
    }
  }

  /** `value` resolved to a plain string, or an error naming what it is. */
  private literal(value: string, what: string): string {
    const resolved: unknown = this.resolve(value);
    if (typeof resolved !== 'string' || Token.isUnresolved(resolved)) throw new Error(`${what} is not known at synthesis (${JSON.stringify(resolved)}): workerBuilds needs the default stack synthesizer and a stack with an account and a region`);
    return resolved;
  }
}
