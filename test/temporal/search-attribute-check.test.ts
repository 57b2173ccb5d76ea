import { randomBytes } from 'node:crypto';
import { msToTs } from '@temporalio/common';
import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchAttributeDefinitions } from '../../src/contracts/search-attributes';
import { checkSearchAttributes } from '../../src/temporal/search-attribute-check';
import { temporalAddress, temporalNamespace } from '../support/temporal';

describe('the search-attribute check before a worker polls', () => {
  let connection: NativeConnection;

  beforeAll(async () => {
    connection = await NativeConnection.connect({ address: temporalAddress() });
  });

  afterAll(async () => {
    await connection.close();
  });

  it('is ready on a namespace where errand registered its attributes', async () => {
    expect(await checkSearchAttributes(connection, temporalNamespace())).toEqual({ kind: 'ready' });
  });

  it('names every missing attribute and the command that registers them on a bare namespace', async () => {
    const namespace = `bare-${randomBytes(4).toString('hex')}`;
    await connection.workflowService.registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs('1 day') });
    const check = await checkSearchAttributes(connection, namespace);
    expect(check.kind).toBe('missing');
    const message = check.kind === 'missing' ? check.message : '';
    for (const attribute of searchAttributeDefinitions) expect(message).toContain(`--name ${attribute.name} --type ${attribute.type}`);
    expect(message).toContain(`temporal operator search-attribute create --namespace ${namespace}`);
  });

  it('says it could not tell, instead of refusing, when the namespace cannot be asked', async () => {
    const check = await checkSearchAttributes(connection, `no-such-namespace-${randomBytes(4).toString('hex')}`);
    expect(check.kind).toBe('unknown');
    expect(check.kind === 'unknown' ? check.message : '').toContain('could not list the search attributes');
  });
});
