/**
 * `npm run bench -- --tracing`: every pass of the run traced, as issue 30 asks the bench to price it. A
 * Jaeger (the demo's, built from its Go module and cached) receives OTLP/HTTP from the benchmark's
 * process (its bridges) and, through the `OTEL_*` variables they inherit, from the worker children.
 */
import { demoJaeger } from '../cli/dev-jaeger';
import { resolveTracing, startTracing } from '../config';

/** Starts Jaeger in `workDir`, points this process and its later children at it; returns the stop. */
export async function startBenchTracing(
  workDir: string,
  progress: (line: string) => void,
): Promise<{ readonly jaegerUrl: string; services(): Promise<string[]>; stop(): Promise<void> }> {
  const jaeger = await demoJaeger(workDir);
  const running = await jaeger.start(progress);
  Object.assign(process.env, jaeger.env);
  const settings = resolveTracing(process.env);
  if ('problems' in settings) throw new Error(`tracing: ${settings.problems.join('; ')}`);
  const tracing = await startTracing(settings, 'homeostat-bench');
  progress(`tracing every pass to Jaeger ${running.url}`);
  return {
    jaegerUrl: running.url,
    /** The services Jaeger holds spans of (after a flush): proof that the run's passes were traced. */
    async services() {
      await new Promise((r) => setTimeout(r, 2_000)); // the exporters batch every second
      const res = await fetch(`${running.url}/api/services`, { signal: AbortSignal.timeout(10_000) });
      const body = (await res.json()) as { data?: string[] | null };
      return [...(body.data ?? [])].sort();
    },
    async stop() {
      await tracing.shutdown().catch(() => {});
      for (const key of Object.keys(jaeger.env)) delete process.env[key];
      await running.stop();
    },
  };
}
