/** The error of CRD generation. */
/** Thrown when a reconciler's CRD cannot be generated (a malformed name, a schema zod cannot express). */
export class CrdError extends Error {
  override readonly name = 'CrdError';
}
