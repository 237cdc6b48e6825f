import { driftCheckedObjects } from '../../bench/scenarios/scale';

describe('bench scale: the objects step 5 checks', () => {
  it('given 10,000 objects and 5 minutes, 1,667 objects check at the rate the 30-minute default gives all 10,000', () => {
    const checked = driftCheckedObjects(10_000, 5 * 60_000);
    expect(checked).toBe(1_667);
    // 1,667 objects every 5 minutes: 5.56 checks/s, as 10,000 every 30 minutes.
    expect(checked / 300).toBeCloseTo(10_000 / 1_800, 1);
  });

  it('given a small run, at least 10 objects (or all of them) so the window still sees checks', () => {
    expect(driftCheckedObjects(200, 30_000)).toBe(10);
    expect(driftCheckedObjects(4, 30_000)).toBe(4);
  });

  it('given a short interval as long as the default, every object', () => {
    expect(driftCheckedObjects(500, 30 * 60_000)).toBe(500);
  });
});
