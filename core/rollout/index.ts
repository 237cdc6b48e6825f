/**
 * core/rollout: homeostat's rollouts over Temporal's Worker Deployment Versioning, for the
 * `homeostat rollout` command and any other client (the HTTP API may use it too): the deployment's
 * versions and the workflows each holds ({@link rolloutStatus}), routing changes behind a
 * compatibility gate ({@link ramp}, {@link promote}, {@link rollback}), waking pinned object workflows
 * onto the Current version ({@link wake}) and waiting until an old version is drained
 * ({@link waitDrained}). Everything goes through the client's raw gRPC service; errors carry the
 * `ERR_ROLLOUT_*` codes of `rolloutErrorCatalog` (with the exit status of `homeostat rollout`).
 */
export * from './compatibility-gate';
export * from './deployment-description';
export * from './deployment-version';
export * from './rollout-errors';
export * from './rollout-status';
export * from './routing';
export * from './wait-drained';
export * from './wake';
