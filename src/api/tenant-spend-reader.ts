import { tenantSpendQueryTimeoutMs, workflowTaskTimeoutMs } from '../contracts/limits/workflow';
import { tenantSpendMessageNames, tenantSpendWorkflowType, utcDay, type HoldAnswer, type HoldRequest, type TenantSpendInput, type TenantSpendView } from '../contracts/tenant-spend';
import { tenantSpendWorkflowId } from '../contracts/workflow-ids';
import { GrpcCode, isGrpcStatus } from '../temporal/grpc-status';
import { TemporalCallError, type TemporalGateway } from './temporal-gateway';

/**
 * The API's side of a tenant's day of spend (decision 0027), through its gateway (no SDK in the Lambda):
 * reads of the day's spend for message routes, and holds on the day's cap for starts. A day whose workflow
 * does not exist yet has no spend; any other miss is an error, never $0.
 */
export interface TenantSpendDesk {
  /** Micro-dollars the tenant's model calls cost today (UTC); 0 only when nothing was reported yet. */
  read(tenant: string, now: number): Promise<number>;
  /** Holds part of the day's cap for a start (tenant-spend-workflow.ts), starting the day's workflow when it is the first. */
  hold(tenant: string, now: number, request: HoldRequest): Promise<HoldAnswer>;
}

/** The desk over the API's gateway; `taskQueue` is where the workers that run the day's workflow listen. */
export function gatewaySpendDesk(gateway: TemporalGateway, taskQueue: string): TenantSpendDesk {
  return {
    async read(tenant, now) {
      try {
        const view = (await gateway.query(tenantSpendWorkflowId(tenant, utcDay(now)), tenantSpendMessageNames.spendQuery, [], tenantSpendQueryTimeoutMs)) as TenantSpendView;
        return view.spentMicroUsd;
      } catch (error) {
        if (error instanceof TemporalCallError && error.code === GrpcCode.notFound) return 0;
        throw error;
      }
    },
    async hold(tenant, now, request) {
      const day = utcDay(now);
      const workflowId = tenantSpendWorkflowId(tenant, day);
      const send = async (): Promise<HoldAnswer> => {
        const outcome = await gateway.update(workflowId, tenantSpendMessageNames.holdStart, request, { updateId: `hold-${request.key}`, waitFor: 'completed', timeoutMs: tenantSpendQueryTimeoutMs });
        if (outcome.stage === 'completed') return outcome.value as HoldAnswer;
        if (outcome.stage === 'accepted') throw new TemporalCallError(`the hold on ${workflowId} was not answered within ${tenantSpendQueryTimeoutMs} ms`, GrpcCode.deadlineExceeded);
        throw new TemporalCallError(`the hold on ${workflowId} failed: ${outcome.message}`, GrpcCode.failedPrecondition);
      };
      try {
        return await send();
      } catch (error) {
        if (!isGrpcStatus(error, GrpcCode.notFound)) throw error;
      }
      // The tenant's first start of the day: start the day (another start may be doing the same).
      const input: TenantSpendInput = { tenant, day };
      try {
        await gateway.start({
          workflowType: tenantSpendWorkflowType,
          workflowId,
          taskQueue,
          args: [input],
          visible: { workflowTaskTimeout: workflowTaskTimeoutMs, staticSummary: `spend of tenant ${tenant} on ${day} (UTC)`, staticDetails: '', typedSearchAttributes: [] },
          idempotent: { memo: {} },
        });
      } catch (error) {
        if (!isGrpcStatus(error, GrpcCode.alreadyExists)) throw error;
      }
      return send();
    },
  };
}
