/**
 * The carried-state envelope: read by any build under one rule (fields only added, unknown fields
 * ignored, an unknown format refused) with an error naming the field; the compatibility check over many.
 */
import {
  carriedStateFormat,
  checkCarriedStates,
  readCarriedState,
  type CollectedCarriedState,
} from '../../core/carried-state';
import { ObjectEntity } from '../../workflows/object-entity';

const ref = { group: 'g', version: 'v1', kind: 'K', namespace: 'ns', name: 'n' };

describe('carried state', () => {
  it('given an envelope written by this build (after a pass, with a timer, for an upgrade), it reads it back', () => {
    const entity = new ObjectEntity({ ref });
    entity.uid = 'u1';
    entity.nextTimer = { kind: 'drift', at: 1000 };
    const outcome = entity.outcome('ready', 3);
    entity.finishPass(outcome);
    const envelope = entity.carried(outcome, { upgrade: true });
    expect(envelope).toMatchObject({
      format: carriedStateFormat,
      uid: 'u1',
      passes: 1,
      runs: 1,
      timer: { kind: 'drift', at: 1000 },
      upgraded: true,
    });
    expect(readCarriedState(JSON.parse(JSON.stringify(envelope)))).toEqual(envelope);
    expect(entity.carried(undefined)).not.toHaveProperty('lastOutcome');
  });

  it('given an envelope written before the format existed, it reads it as format 1', () => {
    expect(readCarriedState({ passes: 2, runs: 1 })).toEqual({ passes: 2, runs: 1 });
  });

  it('given fields this build does not know, it ignores them', () => {
    expect(() => readCarriedState({ format: 1, passes: 0, runs: 0, addedLater: { x: 1 } })).not.toThrow();
  });

  it('given a format this build does not read, or a wrong field, it throws a typed error naming the field', () => {
    const cases: [unknown, string][] = [
      [{ format: 2, passes: 0, runs: 0 }, 'format'],
      [{ format: '1', passes: 0, runs: 0 }, 'format'],
      [{ runs: 0 }, 'passes'],
      [{ passes: 0, runs: -1 }, 'runs'],
      [{ passes: 0, runs: 0, blockedBy: 'maybe' }, 'blockedBy'],
      [{ passes: 0, runs: 0, timer: { kind: 'retry', at: 1 } }, 'timer.kind'],
      [{ passes: 0, runs: 0, previous: { paint: { generation: 'one' } } }, 'previous.paint.generation'],
      [{ passes: 0, runs: 0, lastOutcome: { pass: 1, result: 'ready', phase: 'Ready' } }, 'lastOutcome.steps'],
      [null, '(envelope)'],
    ];
    for (const [value, field] of cases) {
      let caught: unknown;
      try {
        readCarriedState(value);
      } catch (err) {
        caught = err;
      }
      expect(caught).toMatchObject({ code: 'ERR_CARRIED_STATE', field });
      expect((caught as Error).message).toContain(field);
    }
  });

  it('given envelopes of many runs, the check reports each one this build cannot read', () => {
    const envelopes: CollectedCarriedState[] = [
      { workflowId: 'a', envelope: { format: 1, passes: 1, runs: 1 } },
      { workflowId: 'b', envelope: { format: 9, passes: 1, runs: 1 } },
    ];
    const report = checkCarriedStates(envelopes);
    expect(report.checked).toBe(2);
    expect(report.incompatible).toEqual([{ workflowId: 'b', error: expect.stringContaining('format 9') }]);
  });
});
