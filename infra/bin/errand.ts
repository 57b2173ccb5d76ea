import { App } from 'aws-cdk-lib';
import { ErrandStack } from '../lib/errand-stack';
import { parseSettings, settingKeys } from '../lib/settings';

/**
 * The CDK app: `npx aws-cdk@2.1148.1 deploy -c temporalAddress=<host:port> -c temporalNamespace=<ns>` from infra/
 * (see docs/deploy.md for every parameter). Account and region come from the AWS CLI profile.
 */
const app = new App();
const settings = parseSettings(Object.fromEntries(settingKeys.map((key) => [key, app.node.tryGetContext(key)])));
new ErrandStack(app, app.node.tryGetContext('stackName') ?? 'Errand', {
  settings,
  description: 'errand: durable subagent delegation on Temporal (API, workers, buckets, shared volume)',
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
app.synth();
