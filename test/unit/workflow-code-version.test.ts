/**
 * The one compatibility rule of workflow code (core/workflow-code-version): a change of the code the
 * workflow bundle runs needs a new workflow-code version, with its own fingerprint in
 * `test/histories/workflow-code.json` and histories of this release recorded under
 * `test/histories/<version>/`. Comments and types do not count; code does.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { codeVersionOf, workflowCodeVersion, workflowCodeVersions } from '../../core/workflow-code-version';
import { historiesRoot, homeostatVersion, readHistory } from '../support/histories';
import { workflowCodeFiles, workflowCodeFingerprint } from '../support/workflow-fingerprint';

interface Recorded {
  readonly versions: Readonly<Record<string, { readonly fingerprint: string; readonly release: string }>>;
}
const recordedPath = join(historiesRoot, 'workflow-code.json');
const recorded = JSON.parse(readFileSync(recordedPath, 'utf8')) as Recorded;

describe('workflow-code version', () => {
  it('given the workflow code of this checkout, its fingerprint is the one recorded for the current workflow-code version', () => {
    const fingerprint = workflowCodeFingerprint();
    const mine = recorded.versions[String(workflowCodeVersion)];
    if (mine?.fingerprint !== fingerprint) {
      const files = [...workflowCodeFiles().keys()].join(', ');
      throw new Error(
        `The workflow code changed (fingerprint ${fingerprint}, recorded for version ${workflowCodeVersion}: ` +
          `${mine?.fingerprint ?? 'none'}). Files: ${files}.\n` +
          'A change that alters what a recorded history does needs a new workflow-code version: append it to ' +
          'workflowCodeVersions (core/workflow-code-version.ts), branch on it where behaviour changes, record ' +
          `histories (RECORD_HISTORIES=1 npm test) into test/histories/<version>/ and add its fingerprint to test/histories/workflow-code.json. ` +
          'A change that alters nothing recorded (a refactor) may update the current version’s fingerprint ' +
          'while that version is unreleased; see docs/upgrading.md.',
      );
    }
  });

  it('given the recorded fingerprints, there is one per version, none for a version this code does not know, and each version names its release', () => {
    const keys = Object.keys(recorded.versions).map(Number);
    expect(Math.max(...keys)).toBe(workflowCodeVersion);
    expect(workflowCodeVersions).toHaveLength(workflowCodeVersion + 1);
    const fingerprints = Object.values(recorded.versions).map((v) => v.fingerprint);
    expect(new Set(fingerprints).size).toBe(fingerprints.length);
    expect(recorded.versions[String(workflowCodeVersion)]?.release).toBe(homeostatVersion);
  });

  it('given this release’s recorded histories, each run follows the current workflow-code version', () => {
    const dir = join(historiesRoot, homeostatVersion);
    const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThanOrEqual(10);
    for (const file of files) {
      const first = readHistory(join(dir, file)).events?.[0]?.workflowExecutionStartedEventAttributes;
      const payload = first?.input?.payloads?.[0]?.data;
      const input = JSON.parse(Buffer.from(payload!).toString('utf8')) as Parameters<typeof codeVersionOf>[0];
      expect({ file, version: codeVersionOf(input) }).toEqual({ file, version: workflowCodeVersion });
    }
  });

  it('given the start inputs of older runs, the version follows from the booleans they carried', () => {
    expect(codeVersionOf({})).toBe(0);
    expect(codeVersionOf({ localActivities: true })).toBe(1);
    expect(codeVersionOf({ localActivities: true, fuseLeadingSteps: true })).toBe(2);
    expect(codeVersionOf({ localActivities: true, fuseLeadingSteps: true, driftTimerWindow: true })).toBe(3);
    expect(codeVersionOf({ codeVersion: 2, localActivities: false })).toBe(2);
  });

  it("given a run written by a newer build (a rollback), it follows this build's own version instead of refusing it", () => {
    for (const codeVersion of [workflowCodeVersion + 1, 1e9]) {
      expect(codeVersionOf({ codeVersion })).toBe(workflowCodeVersion);
    }
  });

  it('given an input whose version is not a version at all, it refuses to run it rather than run it wrongly', () => {
    for (const codeVersion of [-1, 1.5, Number.NaN]) {
      expect(() => codeVersionOf({ codeVersion })).toThrow(/workflow-code version/);
    }
  });
});
