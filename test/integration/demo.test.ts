/**
 * The README's first command, run headless: the demo brings the Sparkle Pony Ranch to Ready on its
 * own stack (beside the test run's) and prints where to look.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { stackDir } from '../../devstack';
import { randomSuffix } from '../support/harness';

describe('the demo (homeostat dev, what npm run demo runs)', () => {
  it('given --exit-when-ready, it brings the examples to Ready, prints the links and stops everything', async () => {
    const name = `demo-test-${randomSuffix()}`;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(__dirname, '../../cli/homeostat.ts'), 'dev', '--exit-when-ready', '--stack-name', name],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect({ code, out }).toEqual({ code: 0, out: expect.stringContaining('the Sparkle Pony Ranch is Ready') });
    expect(out).toMatch(/postgresdatabases\/pony-spawner-db\s+Ready — All 5 steps succeeded/);
    expect(out).toMatch(/apps\/pony-spawner\s+Ready — All 3 steps succeeded/);
    expect(out).toMatch(
      /Temporal UI\s+http:\/\/127\.0\.0\.1:\d+\/namespaces\/homeostat\/workflows\?query=HomeostatNamespace/,
    );
    expect(out).toMatch(/kubectl\s+kubectl --kubeconfig \S+\/kubeconfig get/);
    expect(out).toContain('stopped');
    expect(existsSync(stackDir(name))).toBe(false);
  });
});
