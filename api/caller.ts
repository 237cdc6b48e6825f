/** Who calls the API, and what access an action asks of the platform's RBAC. */

/** Who called. */
export interface Caller {
  readonly user: string;
  readonly groups: readonly string[];
  readonly uid?: string;
  /** The authenticator's extra attributes (scopes, a node name, …), passed on to SubjectAccessReview. */
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** What an action needs: a verb on a resource, in a namespace. */
export interface AccessRequest {
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  readonly namespace?: string;
  readonly name?: string;
}
