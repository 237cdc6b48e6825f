/**
 * The Temporal codec-server protocol, served by the API so the Temporal UI (and `temporal` CLI's
 * `--codec-endpoint`) can show encrypted payloads decoded to those allowed: `POST …/decode` and
 * `POST …/encode` take and answer `{ payloads: [{ metadata: { key: base64 }, data: base64 }] }`.
 * Each call needs a bearer token (the UI sends its access token when "pass access token" is on) of a
 * caller the platform's RBAC allows the verb `decode` (or `encode`) on `payloads.homeostat.dev`,
 * cluster-scoped. CORS answers the Temporal UI's origin, preflight included.
 */
import type { Payload, PayloadCodec } from '@temporalio/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { isHomeostatError } from '../core/errors';
import type { AccessRequest } from './auth';
import { ApiProblem } from './problems';

/** What a codec call does, and the RBAC verb it needs. */
export type CodecOperation = 'encode' | 'decode';

/** The API group of the `payloads` resource the codec endpoint is authorized on. */
export const codecResourceGroup = 'homeostat.dev';

/**
 * The access a codec call needs: verb `decode` or `encode` on resource `payloads` in group
 * `homeostat.dev`, cluster-scoped (a ClusterRole rule
 * `{ apiGroups: [homeostat.dev], resources: [payloads], verbs: [decode] }` grants it).
 */
export function codecAccess(operation: CodecOperation): AccessRequest {
  return { verb: operation, group: codecResourceGroup, resource: 'payloads' };
}

/** Options of {@link codecEndpoint}. */
export interface CodecEndpointOptions {
  /** The codec the API's Temporal client uses (the same keys as the workers). */
  readonly codec: PayloadCodec;
  /**
   * Authenticates the request's caller and checks the access (throws the API's 401/403 problems);
   * called before the body is read.
   */
  readonly authorize: (req: FastifyRequest, access: AccessRequest) => Promise<void>;
  /**
   * Origins allowed to call from a browser (CORS), e.g. the Temporal UI's `http://localhost:8233`;
   * `*` allows any origin (without credentials). @default none: no browser may call
   */
  readonly allowedOrigins?: readonly string[];
  /** Largest request body accepted. @default 4 MiB (a Temporal payload is at most 2 MiB by default) */
  readonly bodyLimit?: number;
  /** Response schemas of the API's error answers by status, documented on each route (OpenAPI). */
  readonly errorResponses?: Readonly<Record<number, z.ZodType>>;
}

const base64 = z
  .string()
  .max(8 * 1024 * 1024)
  .regex(/^[A-Za-z0-9+/]*={0,2}$/, 'base64');
const jsonPayload = z.object({
  metadata: z.record(z.string(), base64).nullish().describe('metadata values, base64'),
  data: base64.nullish().describe('base64'),
});
const payloadsBody = z.object({ payloads: z.array(jsonPayload).max(10_000) });
type JsonPayload = z.infer<typeof jsonPayload>;

/** A payload from its proto JSON form (bytes as base64). */
export function payloadFromJson(json: JsonPayload): Payload {
  return {
    metadata: Object.fromEntries(Object.entries(json.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
    ...(json.data == null ? {} : { data: Buffer.from(json.data, 'base64') }),
  };
}

/** A payload in its proto JSON form (bytes as base64), as the codec-server protocol carries it. */
export function payloadToJson(payload: Payload): { metadata: Record<string, string>; data: string } {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([k, v]) => [
        k,
        Buffer.from(v ?? new Uint8Array()).toString('base64'),
      ]),
    ),
    data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64'),
  };
}

const corsHeaders = {
  'access-control-allow-methods': 'POST, OPTIONS',
  'access-control-allow-headers': 'authorization, authorization-extras, content-type, x-namespace',
  'access-control-max-age': '600',
};

/**
 * The codec endpoint as a Fastify plugin: register it with a prefix, e.g.
 * `app.register(codecEndpoint, { prefix: '/codec', codec, authorize })` serves `/codec/decode` and
 * `/codec/encode` (and answers their CORS preflights). Errors are thrown as the API's problems.
 */
export async function codecEndpoint(parent: FastifyInstance, options: CodecEndpointOptions): Promise<void> {
  const app = parent.withTypeProvider<ZodTypeProvider>();
  const origins = new Set((options.allowedOrigins ?? []).map((o) => (o === '*' ? o : new URL(o).origin)));

  // On every answer of these routes, errors included, so a browser can read a 401 or 403 too.
  app.addHook('onSend', async (req: FastifyRequest, reply: FastifyReply) => {
    const origin = req.headers.origin;
    void reply.header('vary', 'Origin');
    if (origin === undefined) return;
    if (origins.has(origin)) {
      void reply.header('access-control-allow-origin', origin);
      void reply.header('access-control-allow-credentials', 'true');
    } else if (origins.has('*')) {
      void reply.header('access-control-allow-origin', '*');
    }
  });

  for (const operation of ['decode', 'encode'] as const) {
    // A browser's preflight carries no credentials: public (see authenticate-first.ts).
    app.options(`/${operation}`, { schema: { hide: true }, config: { public: true } }, async (_req, reply) =>
      reply.headers(corsHeaders).status(204).send(),
    );
    app.post(
      `/${operation}`,
      {
        bodyLimit: options.bodyLimit ?? 4 * 1024 * 1024,
        // Authorized before the body is read: an unknown caller cannot make the API parse megabytes.
        onRequest: async (req) => options.authorize(req, codecAccess(operation)),
        schema: {
          summary: operation === 'decode' ? 'Decode (decrypt) payloads' : 'Encode (encrypt) payloads',
          description: `Temporal's codec-server protocol, for the Temporal UI and CLI: payloads ${
            operation === 'decode'
              ? 'as stored in Temporal in, as written by homeostat out'
              : 'in, as stored in Temporal out'
          }. Requires the \`${operation}\` verb on \`payloads.${codecResourceGroup}\` (cluster-scoped, RBAC).`,
          tags: ['codec'],
          body: payloadsBody,
          response: { 200: payloadsBody, ...options.errorResponses },
        },
      },
      async (req) => {
        const payloads = req.body.payloads.map(payloadFromJson);
        try {
          const out = await (operation === 'decode' ? options.codec.decode(payloads) : options.codec.encode(payloads));
          return { payloads: out.map(payloadToJson) };
        } catch (err) {
          if (isHomeostatError(err) && err.code === 'ERR_PAYLOAD_CODEC') {
            throw new ApiProblem('ERR_VALIDATION', err.message, { cause: err });
          }
          throw err;
        }
      },
    );
  }
}
