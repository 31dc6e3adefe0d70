/**
 * One HTTP call to a sandbox acquirer: the kit's bounded JSON call (../http/json-call.ts), under the
 * connection's timeout and the answer size limit, like any provider's.
 */
export { callProviderJson as callAcquirer, type ProviderJsonAnswer as AcquirerAnswer } from '../http/json-call.js';
