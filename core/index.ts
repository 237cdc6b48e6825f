/**
 * core: what every other folder shares — object references and the workflow's wire contract, plans
 * and steps, durations, phases and conditions, the error catalog with its helpers, the reconciler and
 * operator shapes, search-attribute names, the payload encryption codec. It imports nothing else of homeostat (lint keeps it so).
 */
export type * from './activity-contract';
export * from './definitions';
export * from './errors';
export * from './label-selector';
export * from './labels';
export * from './operator';
export * from './payload-codec';
export * from './plan';
export * from './status';
export type * from './reconciler';
