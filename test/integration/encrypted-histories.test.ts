/**
 * Encrypted histories on the real stack: with the payload codec on, a real App (an env value standing
 * for a password in its spec) is reconciled by the real worker and bridge; the history read raw (a
 * client without the codec) holds the value nowhere, and the same history decoded holds it (so the
 * check would catch it in clear); the state query answers through a client with the codec. The codec
 * endpoint of the real API decodes for a caller RBAC allows (TokenReview and SubjectAccessReview on
 * the real kube-apiserver) and answers 401 and 403 to the others.
 */
import { randomBytes } from 'node:crypto';
import * as k8s from '@kubernetes/client-node';
import { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import pino from 'pino';
import { apiKindsOf, buildApiServer, KubernetesAuth } from '../../api';
import { payloadToJson } from '../../api/codec-endpoint';
import { builtinOperator } from '../../builtin';
import { stateQuery, workflowIdFor } from '../../core/definitions';
import { AesGcmPayloadCodec, isEncryptedPayload } from '../../core/payload-codec';
import { randomSuffix, useStack } from '../support/harness';
import { installBuiltinCrds, type InProcessHomeostat, startInProcessHomeostat } from '../support/homeostat';

/** Every payload in a history message, wherever it sits (inputs, results, markers, headers, metadata). */
function payloadsIn(value: unknown, where = '', out: { where: string; payload: Payload }[] = []) {
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return out;
  const o = value as Record<string, unknown>;
  if (o.metadata && typeof o.metadata === 'object' && ('data' in o || Object.keys(o.metadata).length > 0)) {
    const meta = Object.values(o.metadata as Record<string, unknown>);
    if (meta.every((v) => v instanceof Uint8Array)) {
      out.push({ where, payload: o });
      return out;
    }
  }
  for (const [k, v] of Object.entries(o)) payloadsIn(v, `${where}.${k}`, out);
  return out;
}

describe('encrypted histories', () => {
  const t = useStack();
  const taskQueue = `enc-${randomSuffix()}`;
  const password = `pony-pw-${randomBytes(12).toString('hex')}`;
  const codec = new AesGcmPayloadCodec([{ id: `k-${randomSuffix()}`, key: randomBytes(32) }]);
  let homeostat: InProcessHomeostat | undefined;
  let codecClient: Client;
  let app: Awaited<ReturnType<typeof buildApiServer>> | undefined;

  beforeAll(async () => {
    installBuiltinCrds(t);
    homeostat = await startInProcessHomeostat(t, {
      taskQueue,
      logger: pino({ level: 'warn' }),
      bridge: {},
      payloadCodec: codec,
    });
    codecClient = new Client({
      connection: t.connection,
      namespace: t.endpoints.temporalNamespace,
      dataConverter: { payloadCodecs: [codec] },
    });
  });

  afterAll(async () => {
    await app?.close();
    await homeostat?.stop();
  });

  it('given a reconciled App with a secret env value, the raw history holds only ciphertext and the codec client reads the state', async () => {
    await t.custom.createNamespacedCustomObject({
      group: 'homeostat.dev',
      version: 'v1alpha1',
      namespace: t.namespace,
      plural: 'apps',
      body: {
        apiVersion: 'homeostat.dev/v1alpha1',
        kind: 'App',
        metadata: { name: 'pony-vault' },
        spec: {
          image: 'registry.spr.com/pony-spawner:v2.1.0',
          replicas: 1,
          env: [{ name: 'DB_PASSWORD', value: password }],
        },
      },
    });
    const workflowId = workflowIdFor({
      group: 'homeostat.dev',
      kind: 'App',
      namespace: t.namespace,
      name: 'pony-vault',
    });
    // Reconciled: the Deployment carries the value (so the worker read and used the spec).
    const apps = t.kc.makeApiClient(k8s.AppsV1Api);
    let deployed = '';
    for (let i = 0; i < 240 && !deployed; i++) {
      const d = await apps.readNamespacedDeployment({ namespace: t.namespace, name: 'pony-vault' }).catch(() => null);
      deployed = d?.spec?.template.spec?.containers[0]?.env?.find((e) => e.name === 'DB_PASSWORD')?.value ?? '';
      if (!deployed) await new Promise((r) => setTimeout(r, 250));
    }
    expect(deployed).toBe(password);
    let state = await codecClient.workflow.getHandle(workflowId).query(stateQuery);
    for (let i = 0; i < 240 && state.phase !== 'Ready'; i++) {
      await new Promise((r) => setTimeout(r, 250));
      state = await codecClient.workflow.getHandle(workflowId).query(stateQuery);
    }
    expect(state).toMatchObject({ phase: 'Ready', observedGeneration: 1 });
    // A client without the codec cannot read the answer: it is ciphertext too.
    await expect(t.temporal.workflow.getHandle(workflowId).query(stateQuery)).rejects.toThrow(/encoding/i);

    // The history as Temporal stores it, fetched by a client without the codec.
    const res = await t.temporal.workflowService.getWorkflowExecutionHistory({
      namespace: t.endpoints.temporalNamespace,
      execution: { workflowId },
    });
    const history = temporal.api.history.v1.History.create(res.history ?? {});
    const raw = Buffer.from(temporal.api.history.v1.History.encode(history).finish());
    expect(raw.includes(password)).toBe(false);
    expect(raw.includes(Buffer.from(password).toString('base64'))).toBe(false);

    const found = payloadsIn(history);
    const encrypted = found.filter((f) => isEncryptedPayload(f.payload));
    const clear = found.filter((f) => !isEncryptedPayload(f.payload));
    // In clear stay only what Temporal and Core must read: search attributes (indexed; homeostat puts
    // the object's kind, namespace, name, phase and generation there) and Core's own marker data (a
    // local activity's type, sequence number and attempt; a patch's id), never an input or a result.
    const markerData = /^\.events\.\d+\.markerRecordedEventAttributes\.details\.(data|patch-data)\.payloads\.0$/;
    expect(clear.map((f) => f.where).filter((w) => !/searchAttributes/.test(w) && !markerData.test(w))).toEqual([]);
    const coreKeys = [
      'seq',
      'attempt',
      'activity_id',
      'activity_type',
      'complete_time',
      'backoff',
      'original_schedule_time',
      'id',
      'deprecated',
    ];
    for (const f of clear.filter((c) => markerData.test(c.where))) {
      const fields = Object.keys(
        JSON.parse(Buffer.from(f.payload.data ?? new Uint8Array()).toString('utf8')) as object,
      );
      expect(fields.filter((k) => !coreKeys.includes(k))).toEqual([]);
    }
    expect(encrypted.length).toBeGreaterThan(0);
    // The same history decoded holds the value: the check above would see it were it in clear.
    const decoded = await codec.decode(encrypted.map((f) => f.payload));
    const plainText = Buffer.concat(decoded.map((p) => Buffer.from(p.data ?? new Uint8Array()))).toString('utf8');
    expect(plainText).toContain(password);
    const markers = clear.filter((c) => markerData.test(c.where)).length;
    process.stdout.write(
      `encrypted histories: ${history.events.length} events, ${encrypted.length} payloads encrypted; in clear ${clear.length - markers} search attributes and ${markers} Core marker data; ${raw.length} raw bytes without the value\n`,
    );
  });

  it('given the codec endpoint on the real API, an allowed caller decodes, no token gets 401 and a forbidden one 403', async () => {
    const log = pino({ level: 'warn' });
    app = await buildApiServer({
      temporal: codecClient,
      kc: t.kc,
      objects: k8s.KubernetesObjectApi.makeApiClient(t.kc),
      ...apiKindsOf(builtinOperator),
      auth: new KubernetesAuth({ kc: t.kc }),
      log,
      taskQueue,
      rateLimitPerMinute: 1_000_000,
      codec: { payloadCodec: codec, allowedOrigins: [t.endpoints.temporalUiUrl] },
    });
    await app.ready();
    const rbac = t.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
    const role = t.unique('payload-decoder');
    await rbac.createClusterRole({
      body: {
        metadata: { name: role, labels: { 'homeostat.dev/test': 'true' } },
        rules: [{ apiGroups: ['homeostat.dev'], resources: ['payloads'], verbs: ['decode'] }],
      },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: role, labels: { 'homeostat.dev/test': 'true' } },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
        subjects: [{ kind: 'ServiceAccount', name: 'decoder', namespace: t.namespace }],
      },
    });
    const token = async (name: string): Promise<string> => {
      await t.core.createNamespacedServiceAccount({ namespace: t.namespace, body: { metadata: { name } } });
      return (
        await t.core.createNamespacedServiceAccountToken({
          namespace: t.namespace,
          name,
          body: { spec: { audiences: ['homeostat'], expirationSeconds: 3600 } },
        })
      ).status!.token;
    };
    const allowed = await token('decoder');
    const denied = await token('onlooker');

    const body = { payloads: (await codec.encode([{ metadata: {}, data: Buffer.from(password) }])).map(payloadToJson) };
    const origin = new URL(t.endpoints.temporalUiUrl).origin;
    const call = (auth?: string, url = '/codec/decode') =>
      app!.inject({
        method: 'POST',
        url,
        headers: { origin, 'x-namespace': t.endpoints.temporalNamespace, ...(auth ? { authorization: auth } : {}) },
        payload: body,
      });
    const ok = await call(`Bearer ${allowed}`);
    expect(ok.statusCode).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe(origin);
    expect(Buffer.from(ok.json<{ payloads: { data: string }[] }>().payloads[0]!.data, 'base64').toString()).toBe(
      password,
    );
    const none = await call();
    expect(none.statusCode).toBe(401);
    expect(none.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(none.headers['access-control-allow-origin']).toBe(origin);
    const forbidden = await call(`Bearer ${denied}`);
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json<{ detail: string }>().detail).toMatch(/may not decode payloads\.homeostat\.dev/);
    // decode does not grant encode.
    expect((await call(`Bearer ${allowed}`, '/codec/encode')).statusCode).toBe(403);
    // The routes and their answers are in the OpenAPI document.
    const doc = (await app.inject({ method: 'GET', url: '/openapi.json' })).json<{
      paths: Record<string, { post?: { responses: Record<string, unknown> } }>;
    }>();
    expect(Object.keys(doc.paths['/codec/decode']?.post?.responses ?? {})).toEqual(
      expect.arrayContaining(['200', '400', '401', '403', '429']),
    );
    expect(doc.paths['/codec/encode']?.post).toBeDefined();
  });
});
