import type { TypedSearchAttributes } from '@temporalio/common';
import type { DelegationSummary } from '../contracts/delegation-api';
import { searchAttributes } from '../contracts/search-attributes';
import { summarizeExecution, type ErrandAttributeValues, type ExecutionBasics } from './delegation-facts';

/*
 * A delegation's facts as the API's Temporal gateway gives them (temporal-gateway.ts), and the SDK's typed
 * search attributes read into the plain values `delegation-facts.ts` summarises (a type-only import: this
 * file loads no SDK).
 */

/** The facts of one execution the API shows, from a describe or a visibility listing (either gateway's). */
export interface ExecutionFacts extends ExecutionBasics {
  attributes: ErrandAttributeValues;
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
  return summarizeExecution(facts, facts.attributes);
}
