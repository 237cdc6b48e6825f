/**
 * What a pass records of a spec (activities/spec-record.ts, issue 31): the size limit, and a digest
 * that names equal specs alike whatever the order of their keys.
 */
import { maxSpecBytes, oversizeProblem, specDigestOf } from '../../activities/spec-record';

describe('spec record', () => {
  it('given specs at and over 512 KiB of JSON, only the one over is refused, naming its size and the limit', () => {
    const sized = (bytes: number) => ({ data: 'x'.repeat(bytes - '{"data":""}'.length) });
    expect(maxSpecBytes).toBe(524_288);
    expect(oversizeProblem(sized(maxSpecBytes))).toBeUndefined();
    expect(oversizeProblem(sized(maxSpecBytes + 1))).toBe(
      "spec is 524289 bytes as JSON, over homeostat's limit of 524288 bytes (512 KiB): it is neither reconciled " +
        'nor recorded; make it smaller (keep large data in a ConfigMap and name it)',
    );
  });

  it('given equal specs with keys in another order, the digest is the same; a changed value changes it', () => {
    const a = specDigestOf({ x: 1, y: { b: [1, 2], a: 'z' } });
    expect(specDigestOf({ y: { a: 'z', b: [1, 2] }, x: 1 })).toBe(a);
    expect(specDigestOf({ x: 2, y: { b: [1, 2], a: 'z' } })).not.toBe(a);
    expect(specDigestOf({ x: 1, y: { b: [2, 1], a: 'z' } })).not.toBe(a);
    expect(a).toMatch(/^sha256:[0-9a-f]{64}$/);
  });
});
