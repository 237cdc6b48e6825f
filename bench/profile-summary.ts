/**
 * `npx tsx bench/profile-summary.ts [--from US] [--to US] [--bundle FILE] [--passes N] [--top N] FILE.cpuprofile…`:
 * sums V8 CPU profiles (`--cpu-prof`, e.g. the worker child's with `HOMEOSTAT_BENCH_CPU_PROFILE_DIR`)
 * by self and inclusive time per function and per module, with the garbage collector's share. Only
 * samples between `--from` and `--to` count (microseconds on the profile's clock, CLOCK_MONOTONIC: the
 * scale scenario prints its CPU windows so); `--passes` divides the times by the passes of that window
 * (ms per pass); `--bundle` names the webpack modules of the workflow bundle the workflow thread ran.
 * Several files (one per thread) are summed together and also shown one by one.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

interface Args {
  files: string[];
  from?: number;
  to?: number;
  bundle?: string;
  passes?: number;
  top: number;
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = { files: [], top: 30 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--from') args.from = Number(next());
    else if (a === '--to') args.to = Number(next());
    else if (a === '--bundle') args.bundle = next();
    else if (a === '--passes') args.passes = Number(next());
    else if (a === '--top') args.top = Number(next());
    else args.files.push(a);
  }
  return args;
}

/** The modules of a webpack bundle by line: each `/***\/ "path":` line starts one. */
function bundleModules(file: string): (line: number) => string {
  const starts: { line: number; name: string }[] = [];
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((text, i) => {
      const m = /^\/\*\*\*\/ "([^"]+)":/.exec(text) ?? /^\s*\/\*\*\*\/ \(?"([^"]+)"\)?/.exec(text);
      if (m) starts.push({ line: i, name: m[1]! });
    });
  return (line) => {
    let lo = 0;
    let hi = starts.length - 1;
    let found = '(bundle runtime)';
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid]!.line <= line) {
        found = starts[mid]!.name;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return found;
  };
}

const root = process.cwd();

/** The module (package, Node internal, homeostat file, bundle module) of a frame. */
function moduleOf(frame: CallFrame, bundle?: (line: number) => string): string {
  const { url, functionName } = frame;
  if (url === '') return functionName.startsWith('(') ? functionName : `(native) ${functionName || '(anonymous)'}`;
  if (bundle && /bundle/.test(basename(url)) && !url.includes('node_modules')) {
    const m = bundle(frame.lineNumber);
    const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(m);
    return nm ? `bundle:${nm[1]}` : `bundle:${m.replace(/^\.\/|^(\.\.\/)+/g, '')}`;
  }
  if (url.startsWith('node:')) return `node:${url.slice(5).split('/').slice(0, 2).join('/')}`;
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  const path = url.replace(/^file:\/\//, '');
  return path.startsWith(root) ? `homeostat:${path.slice(root.length + 1)}` : path;
}

/** Who a module belongs to: homeostat, the Temporal SDK, another dependency, Node, or V8 itself. */
function ownerOf(module: string): string {
  if (module === '(garbage collector)') return 'V8 GC';
  if (module === '(idle)') return 'idle';
  if (module.startsWith('(program)') || module.startsWith('(root)')) return 'V8/native (program)';
  if (module.startsWith('(native)')) return 'V8 builtins (native)';
  if (module.startsWith('homeostat:') || /^bundle:(workflows|core)\//.test(module)) return 'homeostat';
  if (module.includes('@temporalio')) return 'Temporal SDK';
  if (module.startsWith('bundle:')) return module.startsWith('bundle:(bundle') ? 'Temporal SDK' : `dep ${module}`;
  if (module.startsWith('node:')) return 'Node internals';
  return `dep ${module}`;
}

interface Tally {
  selfFn: Map<string, number>;
  inclFn: Map<string, number>;
  selfMod: Map<string, number>;
  inclMod: Map<string, number>;
  selfOwner: Map<string, number>;
  inclOwner: Map<string, number>;
  totalUs: number;
  idleUs: number;
}

const newTally = (): Tally => ({
  selfFn: new Map(),
  inclFn: new Map(),
  selfMod: new Map(),
  inclMod: new Map(),
  selfOwner: new Map(),
  inclOwner: new Map(),
  totalUs: 0,
  idleUs: 0,
});

const add = (m: Map<string, number>, k: string, v: number): void => {
  m.set(k, (m.get(k) ?? 0) + v);
};

function tally(profile: CpuProfile, args: Args, into: Tally[], bundle?: (line: number) => string): void {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of profile.nodes) byId.set(n.id, n);
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = (n: ProfileNode): string => {
    const f = n.callFrame;
    if (f.url === '') return f.functionName || '(anonymous native)';
    const where = moduleOf(f, bundle);
    return `${f.functionName || '(anonymous)'} ${where}:${f.lineNumber + 1}`;
  };
  // Each sample lasts until the next one.
  let t = profile.startTime;
  const times: number[] = [];
  for (const d of profile.timeDeltas) times.push((t += d));
  for (let i = 0; i < profile.samples.length; i++) {
    const at = times[i]!;
    if (args.from !== undefined && at < args.from) continue;
    if (args.to !== undefined && at > args.to) continue;
    const dur = i + 1 < times.length ? times[i + 1]! - at : 0;
    if (dur <= 0 || dur > 100_000) continue; // a gap (the profiler stopped): not CPU
    const leaf = byId.get(profile.samples[i]!)!;
    for (const tl of into) {
      tl.totalUs += dur;
      if (leaf.callFrame.functionName === '(idle)') {
        tl.idleUs += dur;
        continue;
      }
      const leafMod = moduleOf(leaf.callFrame, bundle);
      add(tl.selfFn, label(leaf), dur);
      add(tl.selfMod, leafMod, dur);
      add(tl.selfOwner, ownerOf(leafMod), dur);
      const fns = new Set<string>();
      const mods = new Set<string>();
      const owners = new Set<string>();
      for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
        const n = byId.get(id)!;
        if (n.callFrame.functionName === '(root)') break;
        const mod = moduleOf(n.callFrame, bundle);
        fns.add(label(n));
        mods.add(mod);
        owners.add(ownerOf(mod));
      }
      for (const k of fns) add(tl.inclFn, k, dur);
      for (const k of mods) add(tl.inclMod, k, dur);
      for (const k of owners) add(tl.inclOwner, k, dur);
    }
  }
}

function print(title: string, tl: Tally, args: Args): void {
  const busy = tl.totalUs - tl.idleUs;
  const per = (us: number): string =>
    args.passes
      ? `${((us / 1000) * 1).toFixed(0).padStart(7)} ms ${(us / 1000 / args.passes).toFixed(3).padStart(7)} ms/pass`
      : `${(us / 1000).toFixed(0).padStart(7)} ms`;
  const pct = (us: number): string => `${((100 * us) / busy).toFixed(1).padStart(5)}%`;
  const lines: string[] = [];
  lines.push(`\n## ${title}`);
  lines.push(
    `window ${(tl.totalUs / 1e6).toFixed(1)} s, busy ${(busy / 1e6).toFixed(2)} s CPU` +
      (args.passes ? `, ${args.passes} passes: ${(busy / 1000 / args.passes).toFixed(2)} ms per pass` : ''),
  );
  const table = (name: string, m: Map<string, number>, n: number): void => {
    lines.push(`\n### ${name}`);
    for (const [k, v] of [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n)) {
      lines.push(`${pct(v)} ${per(v)}  ${k}`);
    }
  };
  table('self by owner', tl.selfOwner, 20);
  table('inclusive by owner', tl.inclOwner, 20);
  table('self by module', tl.selfMod, args.top);
  table('inclusive by module', tl.inclMod, args.top);
  table('self by function', tl.selfFn, args.top);
  table('inclusive by function', tl.inclFn, args.top);
  process.stdout.write(`${lines.join('\n')}\n`);
}

function main(): void {
  const args = parseArgs(process.argv.slice(2));
  if (args.files.length === 0) throw new Error('no .cpuprofile given');
  const bundle = args.bundle ? bundleModules(args.bundle) : undefined;
  const all = newTally();
  const each: [string, Tally][] = [];
  for (const f of args.files) {
    const profile = JSON.parse(readFileSync(f, 'utf8')) as CpuProfile;
    const one = newTally();
    tally(profile, args, [all, one], bundle);
    each.push([basename(f), one]);
  }
  if (args.files.length > 1) print('all threads', all, args);
  for (const [name, tl] of each) print(name, tl, args);
}

main();
