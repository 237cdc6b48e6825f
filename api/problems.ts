/**
 * Errors of the HTTP API as RFC 9457 problem documents (`application/problem+json`), each with a
 * stable `code`.
 */

/** The API's error codes and their HTTP statuses. */
export const problemCodes = {
  ERR_VALIDATION: 400,
  ERR_UNAUTHENTICATED: 401,
  ERR_FORBIDDEN: 403,
  ERR_NOT_FOUND: 404,
  ERR_UNKNOWN_KIND: 404,
  ERR_OBJECT_NOT_FOUND: 404,
  ERR_NO_WORKFLOW: 404,
  ERR_METHOD_NOT_ALLOWED: 405,
  ERR_CONFLICT: 409,
  ERR_PAYLOAD_TOO_LARGE: 413,
  ERR_UNSUPPORTED_MEDIA_TYPE: 415,
  ERR_INVALID_MANIFEST: 422,
  ERR_RATE_LIMITED: 429,
  ERR_UPSTREAM: 502,
  ERR_UNAVAILABLE: 503,
  ERR_TIMEOUT: 504,
} as const;

/** A stable API error code. */
export type ProblemCode = keyof typeof problemCodes;

/** A problem document. */
export interface ProblemDocument {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly code: ProblemCode;
  readonly detail: string;
  readonly instance?: string;
}

/** An error the API answers with a problem document. */
export class ApiProblem extends Error {
  override readonly name = 'ApiProblem';
  readonly status: number;
  /** Sent as `Retry-After` (seconds). */
  readonly retryAfterSeconds?: number;
  /** Sent as `Allow` (a 405's methods of the resource). */
  readonly allow?: readonly string[];
  constructor(
    readonly code: ProblemCode,
    message: string,
    options: { cause?: unknown; retryAfterSeconds?: number; allow?: readonly string[] } = {},
  ) {
    super(message, options.cause === undefined ? {} : { cause: options.cause });
    this.status = problemCodes[code];
    if (options.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
    if (options.allow !== undefined) this.allow = options.allow;
  }
}

const titles: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

/** The problem document of an error code. */
export function problem(code: ProblemCode, detail: string, instance?: string): ProblemDocument {
  const status = problemCodes[code];
  return {
    type: `https://homeostat.dev/problems/${code.toLowerCase().replace(/^err_/, '').replace(/_/g, '-')}`,
    title: titles[status] ?? 'Error',
    status,
    code,
    detail,
    ...(instance ? { instance } : {}),
  };
}
