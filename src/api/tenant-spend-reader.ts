import { tenantSpendQueryTimeoutMs } from '../contracts/limits';
import { tenantSpendMessageNames, utcDay, type TenantSpendView } from '../contracts/tenant-spend';
import { tenantSpendWorkflowId } from '../contracts/workflow-ids';
import { GrpcCode } from '../grpc-status';
import { TemporalCallError, type TemporalGateway } from './temporal-gateway';

/**
 * Micro-dollars the tenant's model calls cost today (UTC), read from the tenant's day workflow (decision
 * 0027) through the API's gateway (no SDK in the Lambda); 0 when nothing was reported yet.
 */
export async function readTenantSpend(gateway: TemporalGateway, tenant: string, now: number): Promise<number> {
  try {
    const view = (await gateway.query(tenantSpendWorkflowId(tenant, utcDay(now)), tenantSpendMessageNames.spendQuery, [], tenantSpendQueryTimeoutMs)) as TenantSpendView;
    return view.spentMicroUsd;
  } catch (error) {
    if (error instanceof TemporalCallError && error.code === GrpcCode.notFound) return 0;
    throw error;
  }
}
