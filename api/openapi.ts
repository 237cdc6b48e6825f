/**
 * The API's OpenAPI 3.0 document, generated from the routes' zod schemas, with bearer authentication
 * and every error answer typed `application/problem+json` (RFC 9457); its description says what the
 * operations cannot: authentication first, 405 with `Allow`.
 */
import swagger from '@fastify/swagger';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import type { ApiApp } from './route-context';

/** The part of an OpenAPI operation rewritten for problem documents. */
interface OpenApiOperation {
  responses?: Record<string, { content?: Record<string, unknown> }>;
}

/** Registers the document generator on `app` (before its routes); `app.swagger()` returns the document. */
export async function describeWithOpenApi(app: ApiApp): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'homeostat API',
        version: '0.1.0',
        description: [
          'Trigger and read reconciles of Kubernetes objects.',
          '',
          'Authentication comes before any other answer: every request but the public ones (`/healthz`, `/readyz`, `/metrics`, this document, CORS preflights of `/codec/…`) needs a valid bearer token, and without one it gets 401 whatever its path, method or parameters, so a caller without a token learns nothing of the paths, kinds or methods served (past the failed-authentication budget of its address, 429).',
          '',
          'An authenticated caller gets 405 `ERR_METHOD_NOT_ALLOWED` with an `Allow` header for a method a path of this document is not served with, and 404 `ERR_NOT_FOUND` for a path no route serves.',
          '',
          'Errors are problem documents (`application/problem+json`, RFC 9457) with a stable `code`. Use `core` as the group of the core API group, and `_` as the namespace of cluster-scoped kinds.',
        ].join('\n'),
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
    // Errors are answered as application/problem+json (RFC 9457): the document says so.
    transformObject: (doc) => {
      const openapi = (doc as { openapiObject: { paths?: Record<string, Record<string, OpenApiOperation>> } })
        .openapiObject;
      for (const methods of Object.values(openapi.paths ?? {})) {
        for (const op of Object.values(methods)) {
          for (const [status, response] of Object.entries(op.responses ?? {})) {
            const json = response.content?.['application/json'];
            if (Number(status) >= 400 && json) response.content = { 'application/problem+json': json };
          }
        }
      }
      return openapi;
    },
  });
}
