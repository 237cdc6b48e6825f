/**
 * bench: homeostat measured against its ceilings on one local stack, in one run — latency, burst,
 * storm, memory and cost, each against the raw Temporal workflow (a) and an in-process controller (b)
 * where they apply. `npm run bench` runs the full size; the integration test runs the small size via
 * {@link runBench}. See `bench/README.md`.
 */
export { runBench, type RunBenchOptions, type RunBenchOutcome } from './bench';
export { markdown, writeResults, type BenchResult } from './report';
export { sizes, type BenchSize, type SizeName } from './sizes';
