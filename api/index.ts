/**
 * The HTTP API: platform backends trigger reconciles (update-with-start of the object's workflow) and
 * read object state (the `state` query, Temporal visibility), authenticated by Kubernetes TokenReview
 * and authorized by SubjectAccessReview, so the platform's RBAC decides.
 */
export { buildApiServer } from './server';
export { apiKindsOf, type ApiDeps } from './deps';
export { KubernetesAuth, parseStaticTokens, type Caller, type StaticToken, type AccessRequest } from './auth';
export { ApiProblem, problem, problemCodes, type ProblemCode, type ProblemDocument } from './problems';
export { apiEnvSchema, loadApiConfig, type ApiConfig } from './config';
export { startApiComponent, type RunningApi } from './run-api';
