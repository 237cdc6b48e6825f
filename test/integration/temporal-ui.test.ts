/**
 * Temporal UI inspection in a real browser: headless Chromium (Debian's package, driven by
 * playwright-core) filters workflows by homeostat's search attributes, opens an object's workflow and
 * sees its summary, its current details (step progress; a pending approval, then who decided it) and
 * its activity summaries. With the payload
 * codec on, the UI shows an object's payloads as ciphertext until it is pointed (in its data encoder
 * settings, kept in the browser's localStorage) at the API's codec endpoint, served over HTTPS so the
 * UI passes the access token; then it shows them decoded. The screenshots are saved in test-artifacts/.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { Client } from '@temporalio/client';
import pino from 'pino';
import { chromium, type Browser, type Page } from 'playwright-core';
import { apiKindsOf, buildApiServer } from '../../api';
import { builtinOperator } from '../../builtin';
import { decideApprovalUpdate, stateQuery, workflowIdFor } from '../../core/definitions';
import { AesGcmPayloadCodec } from '../../core/payload-codec';
import { randomSuffix, useStack } from '../support/harness';
import { installBuiltinCrds, type InProcessHomeostat, startInProcessHomeostat } from '../support/homeostat';

const chromiumPath = '/usr/bin/chromium';
const artifacts = join(__dirname, '../../test-artifacts');

/**
 * The text of every frame of `page` (the UI renders summary and details markdown in sandboxed frames),
 * read until it matches `wanted` (or 30 s pass: the caller's expectation then fails on what it shows).
 */
async function framesText(page: Page, wanted: RegExp): Promise<string> {
  let text = '';
  for (let i = 0; i < 120 && !wanted.test(text); i++) {
    if (i > 0) await page.waitForTimeout(250);
    const texts = await Promise.all(
      page.frames().map((f) =>
        f
          .locator('body')
          .innerText()
          .catch(() => ''),
      ),
    );
    text = texts.join('\n');
  }
  return text;
}

/** Opens the User Metadata tab of the workflow page `page` shows. */
async function openUserMetadata(page: Page): Promise<void> {
  await page
    .getByRole('link', { name: 'User Metadata' })
    .or(page.getByRole('tab', { name: 'User Metadata' }))
    .first()
    .click();
}

describe('Temporal UI inspection', () => {
  const t = useStack();
  const taskQueue = `ui-${randomSuffix()}`;
  const log = pino({ level: 'warn' });
  let homeostat: InProcessHomeostat | undefined;
  let browser: Browser;

  beforeAll(async () => {
    if (!existsSync(chromiumPath))
      throw new Error(`${chromiumPath} is missing: scripts/ensure-deps.sh installs Debian's chromium`);
    installBuiltinCrds(t);
    homeostat = await startInProcessHomeostat(t, { taskQueue, logger: log, bridge: {} });
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });

  afterAll(async () => {
    await browser?.close();
    await homeostat?.stop();
  });

  it('given a Ready App, the UI filters it by HomeostatNamespace and HomeostatPhase and shows summary, step details and activity summaries', async () => {
    await t.custom.createNamespacedCustomObject({
      group: 'homeostat.dev',
      version: 'v1alpha1',
      namespace: t.namespace,
      plural: 'apps',
      body: {
        apiVersion: 'homeostat.dev/v1alpha1',
        kind: 'App',
        metadata: { name: 'pony-spawner' },
        spec: { image: 'registry.spr.com/pony-spawner:v2.1.0', replicas: 3 },
      },
    });
    const workflowId = `homeostat/homeostat.dev/App/${t.namespace}/pony-spawner`;
    // Visible as Ready through the search attributes within a minute, or the test fails here (the
    // "only this object matches" check below would mean nothing on an empty list).
    let found: string[] = [];
    for (let i = 0; !found.includes(workflowId); i++) {
      if (i === 240) throw new Error(`${workflowId} not listed as Ready within a minute: ${JSON.stringify(found)}`);
      if (i > 0) await new Promise((r) => setTimeout(r, 250));
      found = [];
      for await (const wf of t.temporal.workflow.list({
        query: `HomeostatNamespace = '${t.namespace}' AND HomeostatPhase = 'Ready'`,
      }))
        found.push(wf.workflowId);
    }

    const page = await browser.newPage({ viewport: { width: 1600, height: 1200 } });
    const query = encodeURIComponent(`HomeostatNamespace="${t.namespace}" AND HomeostatPhase="Ready"`);
    await page.goto(
      `${t.endpoints.temporalUiUrl}/namespaces/${t.endpoints.temporalNamespace}/workflows?query=${query}`,
    );
    const link = page.getByRole('link', { name: workflowId });
    await link.waitFor({ timeout: 60_000 });
    expect(await page.getByRole('link', { name: /^homeostat\// }).count()).toBe(1); // only this object matches
    await link.click();
    await page.waitForURL(/\/workflows\/homeostat%2F/);
    await page.getByText(`Reconciles App ${t.namespace}/pony-spawner`).first().waitFor({ timeout: 60_000 });
    // Current details: the step progress markdown.
    await page
      .getByText(/deployment/)
      .first()
      .waitFor({ timeout: 30_000 });
    const text = await page.locator('body').innerText();
    expect(text).toContain(`Reconciles App ${t.namespace}/pony-spawner`);
    expect(text).toMatch(/config[\s\S]*deployment[\s\S]*service/);
    // Activity summaries, in the event history: this wait is the check (it throws after 30 s). The
    // screenshot is an artifact for people, not a check.
    await page.getByText('apply the Deployment').first().waitFor({ timeout: 30_000 });
    mkdirSync(artifacts, { recursive: true });
    await page.screenshot({ path: join(artifacts, 'temporal-ui-workflow.png'), fullPage: true });
    // The User Metadata tab: the static summary and the current details (step progress markdown).
    await openUserMetadata(page);
    const details = await framesText(page, /deployment[\s\S]*succeeded/);
    expect(details).toContain(`Reconciles App ${t.namespace}/pony-spawner`);
    expect(details).toMatch(new RegExp(`App ${t.namespace}/pony-spawner — phase Ready`));
    expect(details).toMatch(/config[\s\S]*succeeded[\s\S]*deployment[\s\S]*succeeded[\s\S]*service[\s\S]*succeeded/);
    await page.screenshot({ path: join(artifacts, 'temporal-ui-user-metadata.png'), fullPage: true });
  });

  it('given an App waiting for approval, the workflow page shows the pending step and reason; after the approval, who approved it and why', async () => {
    const name = 'pony-gate';
    const ref = { group: 'homeostat.dev', version: 'v1alpha1', kind: 'App', namespace: t.namespace, name };
    const handle = t.temporal.workflow.getHandle(workflowIdFor(ref));
    await t.custom.createNamespacedCustomObject({
      group: ref.group,
      version: ref.version,
      namespace: t.namespace,
      plural: 'apps',
      body: {
        apiVersion: 'homeostat.dev/v1alpha1',
        kind: 'App',
        metadata: { name },
        spec: { image: 'registry.spr.com/pony-spawner:v2.1.0', replicas: 1, approvals: { imageRepository: true } },
      },
    });
    const apps = t.kc.makeApiClient(k8s.AppsV1Api);
    const image = async (): Promise<string | undefined> =>
      (await apps.readNamespacedDeployment({ namespace: t.namespace, name }).catch(() => undefined))?.spec?.template
        ?.spec?.containers[0]?.image;
    const until = async <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => {
      for (let i = 0; ; i++) {
        const value = await probe().catch(() => undefined);
        if (value !== undefined && value !== false) return value;
        if (i === 240) throw new Error(`${what} not seen within a minute`);
        await new Promise((r) => setTimeout(r, 250));
      }
    };
    await until('the first image', async () => (await image()) === 'registry.spr.com/pony-spawner:v2.1.0' || undefined);
    await t.custom.patchNamespacedCustomObject(
      {
        group: ref.group,
        version: ref.version,
        namespace: t.namespace,
        plural: 'apps',
        name,
        body: { spec: { image: 'mirror.example/pony-spawner:v2.1.0' } },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
    const waiting = await until('the wait', async () => (await handle.query(stateQuery)).awaitingApproval);

    const page = await browser.newPage({ viewport: { width: 1600, height: 1200 } });
    const url = `${t.endpoints.temporalUiUrl}/namespaces/${t.endpoints.temporalNamespace}/workflows/${encodeURIComponent(handle.workflowId)}`;
    await page.goto(url);
    await page.getByText(handle.workflowId).first().waitFor({ timeout: 60_000 });
    await openUserMetadata(page);
    const pending = await framesText(page, /Awaiting approval/);
    expect(pending).toContain(`App ${t.namespace}/${name} — phase AwaitingApproval`);
    expect(pending).toMatch(/Awaiting approval[\s\S]*step deployment, generation 2/);
    expect(pending).toContain(
      'the image repository would change from registry.spr.com/pony-spawner to mirror.example/pony-spawner',
    );
    mkdirSync(artifacts, { recursive: true });
    await page.screenshot({ path: join(artifacts, 'temporal-ui-awaiting-approval.png'), fullPage: true });

    await handle.executeUpdate(decideApprovalUpdate, {
      args: [
        {
          ref,
          decision: 'approve',
          approver: 'alice@ranch',
          comment: 'the mirror is ours',
          generation: waiting.generation,
          previewHash: waiting.previewHash,
        },
      ],
    });
    await until('the new image', async () => (await image()) === 'mirror.example/pony-spawner:v2.1.0' || undefined);
    await page.reload();
    await page.getByText(handle.workflowId).first().waitFor({ timeout: 60_000 });
    await openUserMetadata(page);
    const decided = await framesText(page, /approved by alice@ranch/);
    expect(decided).toContain('step deployment approved by alice@ranch: the mirror is ours (generation 2)');
    expect(decided).not.toContain('Awaiting approval');
    await page.screenshot({ path: join(artifacts, 'temporal-ui-approved.png'), fullPage: true });
    await page.close();
  });

  it('given encrypted payloads, the UI shows ciphertext without a codec endpoint and the decoded summary once pointed at the API’s', async () => {
    const codec = new AesGcmPayloadCodec([{ id: 'ui-test', key: randomBytes(32) }]);
    const namespace = `${t.namespace}-enc`;
    await t.core.createNamespace({ body: { metadata: { name: namespace, labels: { 'homeostat.dev/test': 'true' } } } });
    const encrypted = await startInProcessHomeostat(t, {
      taskQueue: `${taskQueue}-enc`,
      logger: log,
      bridge: { namespace },
      payloadCodec: codec,
    });
    // The API over HTTPS (the UI passes an access token to HTTPS codec endpoints only), with a
    // self-signed certificate the browser context is told to accept.
    const dir = mkdtempSync(join(tmpdir(), 'homeostat-ui-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    const uiOrigin = new URL(t.endpoints.temporalUiUrl).origin;
    const token = randomBytes(24).toString('hex');
    const decodes: number[] = [];
    const api = await buildApiServer({
      temporal: new Client({
        connection: t.connection,
        namespace: t.endpoints.temporalNamespace,
        dataConverter: { payloadCodecs: [codec] },
      }),
      kc: t.kc,
      objects: k8s.KubernetesObjectApi.makeApiClient(t.kc),
      ...apiKindsOf(builtinOperator),
      // The UI's user, as TokenReview and SubjectAccessReview would answer for an allowed one (the real
      // reviews are checked in encrypted-histories.test.ts).
      auth: {
        authenticate: async (presented) => (presented === token ? { user: 'ui-user', groups: [] } : undefined),
        authorize: async (_who, access) => access.verb === 'decode' && access.resource === 'payloads',
      },
      log,
      taskQueue: `${taskQueue}-enc`,
      https: { cert: readFileSync(join(dir, 'cert.pem')), key: readFileSync(join(dir, 'key.pem')) },
      codec: { payloadCodec: codec, allowedOrigins: [uiOrigin] },
    });
    api.addHook('onResponse', async (req, reply) => {
      if (req.url === '/codec/decode') decodes.push(reply.statusCode);
    });
    const codecUrl = `${await api.listen({ port: 0, host: '127.0.0.1' })}/codec`;
    expect(codecUrl).toMatch(/^https:/);
    const context = await browser.newContext({ viewport: { width: 1600, height: 1200 }, ignoreHTTPSErrors: true });
    try {
      await t.custom.createNamespacedCustomObject({
        group: 'homeostat.dev',
        version: 'v1alpha1',
        namespace,
        plural: 'apps',
        body: {
          apiVersion: 'homeostat.dev/v1alpha1',
          kind: 'App',
          metadata: { name: 'pony-vault' },
          spec: {
            image: 'registry.spr.com/pony-spawner:v2.1.0',
            replicas: 1,
            env: [{ name: 'DB_PASSWORD', value: 'x' }],
          },
        },
      });
      const workflowId = `homeostat/homeostat.dev/App/${namespace}/pony-vault`;
      const reader = new Client({
        connection: t.connection,
        namespace: t.endpoints.temporalNamespace,
        dataConverter: { payloadCodecs: [codec] },
      });
      for (let i = 0; ; i++) {
        const phase = await reader.workflow
          .getHandle(workflowId)
          .query(stateQuery)
          .then((s) => s.phase)
          .catch(() => undefined);
        if (phase === 'Ready') break;
        if (i === 240) throw new Error(`${workflowId} not Ready within a minute`);
        await new Promise((r) => setTimeout(r, 250));
      }
      const summary = `Reconciles App ${namespace}/pony-vault`;
      const url = `${t.endpoints.temporalUiUrl}/namespaces/${t.endpoints.temporalNamespace}/workflows/${encodeURIComponent(workflowId)}`;

      // No codec endpoint: the workflow page loads (its ID shows) but the summary is ciphertext.
      const page = await context.newPage();
      await page.goto(url);
      await page.getByText(workflowId).first().waitFor({ timeout: 60_000 });
      await page
        .getByText(/binary\/encrypted|YmluYXJ5L2VuY3J5cHRlZA/)
        .first()
        .waitFor({ timeout: 30_000 });
      expect(await page.locator('body').innerText()).not.toContain(summary);
      mkdirSync(artifacts, { recursive: true });
      await page.screenshot({ path: join(artifacts, 'temporal-ui-encrypted.png'), fullPage: true });

      // The data encoder settings the UI keeps in localStorage: the endpoint, and pass the access token
      // (the UI takes it from globalThis.AccessToken when an embedding page provides one; with the UI's
      // own OIDC login it is the login's token).
      await page.addInitScript(
        ([endpoint, accessToken]) => {
          const storage = (globalThis as unknown as { localStorage: { setItem(k: string, v: string): void } })
            .localStorage;
          storage.setItem('endpoint', JSON.stringify(endpoint));
          storage.setItem('passAccessToken', 'true');
          (globalThis as { AccessToken?: () => Promise<string> }).AccessToken = async () => accessToken!;
        },
        [codecUrl, token],
      );
      await page.reload();
      await page.getByText(summary).first().waitFor({ timeout: 60_000 });
      expect(decodes.filter((s) => s === 200).length).toBeGreaterThan(0);
      await page.screenshot({ path: join(artifacts, 'temporal-ui-decoded.png'), fullPage: true });
    } finally {
      await context.close();
      await api.close();
      await encrypted.stop();
    }
  });
});
