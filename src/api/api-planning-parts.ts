/**
 * What the source routes and delegation planning need, gathered in one module that default-dependencies.ts
 * loads with `import()` at the first request that reads sources or plans a delegation (decision 0026).
 */
export { createApiSourceLookup } from './api-source-lookup';
export { apiPlanner } from './plan-api-delegation';
