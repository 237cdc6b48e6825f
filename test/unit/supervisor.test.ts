/**
 * The dev command's supervisor keeps its children running as a Deployment keeps Pods: a child that
 * exits is restarted with doubling backoff (reset after a long run), and stopping sends SIGTERM to
 * each child's process group, then SIGKILL after the grace period. Real child processes (`node -e`).
 */
import { readFileSync } from 'node:fs';
import { restartDelay, Supervisor, type SupervisorEvent } from '../../cli/supervisor';
import { alive } from '../support/process';

const node = (script: string) => ({ command: process.execPath, args: ['-e', script] });
async function until(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('restartDelay', () => {
  it('given restarts in a row, it doubles from 0.5 s up to 10 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => restartDelay(n))).toEqual([
      500, 1000, 2000, 4000, 8000, 10_000, 10_000, 10_000,
    ]);
    expect(restartDelay(3, { initialMs: 10, maxMs: 25 })).toBe(25);
  });
});

describe('Supervisor', () => {
  let supervisor: Supervisor | undefined;
  afterEach(() => supervisor?.kill());

  it('given a child that exits, it restarts it with backoff and reports exit and restart', async () => {
    const events: SupervisorEvent[] = [];
    supervisor = new Supervisor({ backoff: { initialMs: 50 }, onEvent: (e) => events.push(e) });
    supervisor.start({ name: 'crashy', ...node('setTimeout(() => process.exit(3), 100)') });
    await until(() => events.filter((e) => e.type === 'restarted').length >= 2);
    const [started, exited1, restarted1, exited2, restarted2] = events;
    expect(started).toMatchObject({ type: 'started', name: 'crashy' });
    expect(exited1).toMatchObject({ type: 'exited', reason: 'code 3', restart: 1, delayMs: 50 });
    expect(restarted1).toMatchObject({ type: 'restarted', restart: 1 });
    expect(exited2).toMatchObject({ type: 'exited', reason: 'code 3', restart: 2, delayMs: 100 });
    expect(restarted2).toMatchObject({ type: 'restarted', restart: 2 });
    expect(supervisor.restarts()).toEqual({ crashy: 2 });
  });

  it('given a child killed by SIGKILL after a long run, it names the signal and starts the backoff over', async () => {
    let now = 0;
    const events: SupervisorEvent[] = [];
    supervisor = new Supervisor({
      backoff: { initialMs: 50, resetAfterMs: 1000 },
      now: () => now,
      onEvent: (e) => events.push(e),
    });
    supervisor.start({ name: 'worker', ...node('setInterval(() => {}, 1000)') });
    for (const ranMs of [0, 0, 5000]) {
      const pid = supervisor.pids().worker!;
      now += ranMs;
      process.kill(pid, 'SIGKILL');
      await until(() => supervisor!.pids().worker !== undefined && supervisor!.pids().worker !== pid);
    }
    expect(events.filter((e) => e.type === 'exited')).toEqual([
      expect.objectContaining({ reason: 'SIGKILL', restart: 1, delayMs: 50 }),
      expect.objectContaining({ reason: 'SIGKILL', restart: 2, delayMs: 100 }),
      // It ran 5 s (over resetAfterMs): back to the first delay.
      expect.objectContaining({ reason: 'SIGKILL', restart: 3, delayMs: 50 }),
    ]);
  });

  it('given stop, children get SIGTERM, one that ignores it gets SIGKILL after the grace, and none restarts', async () => {
    const events: SupervisorEvent[] = [];
    supervisor = new Supervisor({ backoff: { initialMs: 10 }, onEvent: (e) => events.push(e) });
    supervisor.start({
      name: 'polite',
      ...node("process.on('SIGTERM', () => process.exit(0)); setInterval(() => {}, 1000)"),
    });
    supervisor.start({
      name: 'stubborn',
      ...node("process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"),
    });
    const { polite, stubborn } = supervisor.pids() as { polite: number; stubborn: number };
    await new Promise((r) => setTimeout(r, 300)); // both have installed their handlers
    const started = Date.now();
    expect(await supervisor.stop(500)).toEqual(['stubborn']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    expect([alive(polite), alive(stubborn)]).toEqual([false, false]);
    await new Promise((r) => setTimeout(r, 100));
    expect(events.map((e) => e.type)).toEqual(['started', 'started']);
    expect(supervisor.pids()).toEqual({});
  });

  it('given a child, it runs in a process group of its own (a terminal Ctrl-C reaches only the supervisor)', async () => {
    supervisor = new Supervisor();
    supervisor.start({ name: 'child', ...node('setInterval(() => {}, 1000)') });
    const pid = supervisor.pids().child!;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [, , pgrp, session] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    expect({ pgrp: Number(pgrp), session: Number(session) }).toEqual({ pgrp: pid, session: pid });
  });
});
