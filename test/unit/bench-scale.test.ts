import { driftCheckedObjects, threadCpuByGroup, workerThreadGroup } from '../../bench/scenarios/scale';

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

describe('bench scale: the worker’s CPU by thread', () => {
  const t = (entries: [number, string, number][]) =>
    new Map(entries.map(([tid, name, seconds]) => [tid, { name, seconds }]));

  it('given two readings, each group gets its threads’ CPU per minute, and CPU on no live thread is short-lived', () => {
    const before = t([
      [1, 'MainThread', 10],
      [2, 'WorkerThread', 5],
      [3, 'tokio-runtime-w', 1],
      [4, 'workflow-proces', 1],
      [5, 'V8Worker', 2],
      [6, 'Watchdog', 0.1], // ends in the window
    ]);
    const after = t([
      [1, 'MainThread', 13],
      [2, 'WorkerThread', 7],
      [3, 'tokio-runtime-w', 1.5],
      [4, 'workflow-proces', 2],
      [5, 'V8Worker', 2.5],
      [7, 'libuv-worker', 0.5], // started in the window
    ]);
    // The process used 9 s: 3 + 2 + 0.5 + 1 + 0.5 + 0.5 = 7.5 on live threads, 1.5 on ended ones.
    expect(threadCpuByGroup(before, after, 9, 120)).toEqual({
      main: 1.5,
      workflow: 1,
      rustCore: 0.75,
      v8Helpers: 0.25,
      libuv: 0.25,
      shortLived: 0.75,
    });
  });

  it('given thread names, the group of each', () => {
    expect(workerThreadGroup('MainThread')).toBe('main');
    expect(workerThreadGroup('WorkerThread')).toBe('workflow');
    expect(workerThreadGroup('temporal-real-s')).toBe('rustCore');
    expect(workerThreadGroup('DelayedTaskSche')).toBe('v8Helpers');
    expect(workerThreadGroup('SignalInspector')).toBe('other');
  });
});
