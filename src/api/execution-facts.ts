import type { TypedSearchAttributes } from '@temporalio/common';
import type { DelegationSummary } from '../contracts/api';
import { searchAttributes } from '../contracts/search-attributes';
import { summarizeExecution, type ErrandAttributeValues } from './delegation-facts';

/*
 * The SDK side of a delegation's facts: what a describe or a visibility listing gives, read into the
 * plain values `delegation-facts.ts` summarises (that file stays free of the SDK for the CLI's light peek).
 */

/** The facts of one execution the API shows, from a describe or a visibility listing. */
export interface ExecutionFacts {
  workflowId: string;
  runId: string;
  statusName: string;
  startTime: Date | undefined;
  closeTime: Date | undefined;
  attributes: TypedSearchAttributes;
}

/** errand's search attribute values out of the SDK's typed search attributes. */
export function attributeValues(attributes: TypedSearchAttributes): ErrandAttributeValues {
  return {
    kind: attributes.get(searchAttributes.kind),
    source: attributes.get(searchAttributes.source),
    parent: attributes.get(searchAttributes.parent),
    status: attributes.get(searchAttributes.status),
    tenant: attributes.get(searchAttributes.tenant),
    model: attributes.get(searchAttributes.model),
    turns: attributes.get(searchAttributes.turns),
  };
}

/** The summary the API shows of an execution. */
export function summaryOf(facts: ExecutionFacts): DelegationSummary {
  return summarizeExecution(facts, attributeValues(facts.attributes));
}
