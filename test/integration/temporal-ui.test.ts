/**
 * Temporal UI inspection in a real browser: headless Chromium (Debian's package, driven by
 * playwright-core) filters workflows by homeostat's search attributes, opens an object's workflow and
 * sees its summary, its current details (step progress) and its activity summaries. The screenshot
 * is saved in test-artifacts/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { chromium, type Browser } from 'playwright-core';
import { randomSuffix, useStack } from '../support/harness';
import { installBuiltinCrds, type InProcessHomeostat, startInProcessHomeostat } from '../support/homeostat';

const chromiumPath = '/usr/bin/chromium';
const artifacts = join(__dirname, '../../test-artifacts');

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
    await page
      .getByRole('link', { name: 'User Metadata' })
      .or(page.getByRole('tab', { name: 'User Metadata' }))
      .first()
      .click();
    // The UI renders summary and details markdown in sandboxed frames: read every frame's text.
    let details = '';
    for (let i = 0; i < 120 && !/deployment[\s\S]*succeeded/.test(details); i++) {
      const texts = await Promise.all(
        page.frames().map((f) =>
          f
            .locator('body')
            .innerText()
            .catch(() => ''),
        ),
      );
      details = texts.join('\n');
      if (!/deployment[\s\S]*succeeded/.test(details)) await page.waitForTimeout(250);
    }
    expect(details).toContain(`Reconciles App ${t.namespace}/pony-spawner`);
    expect(details).toMatch(new RegExp(`App ${t.namespace}/pony-spawner — phase Ready`));
    expect(details).toMatch(/config[\s\S]*succeeded[\s\S]*deployment[\s\S]*succeeded[\s\S]*service[\s\S]*succeeded/);
    await page.screenshot({ path: join(artifacts, 'temporal-ui-user-metadata.png'), fullPage: true });
  });
});
