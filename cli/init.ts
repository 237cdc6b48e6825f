/**
 * `homeostat init <dir>`: scaffolds a new operator project that depends on homeostat (no fork): a
 * `Tenant` reconciler a platform team would really write (a Namespace with a ResourceQuota, a
 * LimitRange, a RoleBinding for the team's group and a default-deny NetworkPolicy), its operator, its
 * generated CRD, an example, tests on the real local stack through `homeostat/testing`, TypeScript and
 * lint configuration, and a README whose two commands run the demo and the tests.
 *
 * The sample's sources are real files of this package (`templates/tenant-operator/`), type-checked,
 * linted and tested here; the scaffold copies them, pointing their imports at the package's public
 * entry points, and writes the CRD generated from the same code.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { goVersionNeeded } from '../devstack/binaries';
import { packageRoot } from '../devstack/paths';
import templateOperator from '../templates/tenant-operator/src/operator';
import { crdFolderFiles } from './crd-folder';

/** Options of {@link scaffold}. */
export interface ScaffoldOptions {
  /** The folder to create the project in: missing, or empty (a `.git` folder alone is fine). */
  readonly dir: string;
  /** The project's package name and operator name (kebab-case). @default the folder's name */
  readonly name?: string;
  /** Progress lines. */
  readonly log: (line: string) => void;
  /**
   * The project's `homeostat` dependency: a version range, or the path of a tarball from `npm pack`
   * (written as an absolute `file:` specifier).
   * @default `^<the version of this homeostat>`
   */
  readonly homeostat?: string;
}

/** What {@link scaffold} wrote. */
export interface ScaffoldResult {
  /** The project folder (absolute). */
  readonly dir: string;
  readonly name: string;
  /** The files written, relative to {@link dir}, sorted. */
  readonly files: readonly string[];
}

/** Thrown when the scaffold refuses its input (the message says what to change). */
export class ScaffoldError extends Error {
  override readonly name = 'ScaffoldError';
}

/** Where the sample project's sources are, inside the homeostat package. */
export const templateDir = join(packageRoot, 'templates', 'tenant-operator');

/** The template's imports of homeostat's own folders, and the public entry points they become. */
const publicEntries: Readonly<Record<string, string>> = {
  '../../../reconcilers': 'homeostat',
  '../../../testing': 'homeostat/testing',
};

/** The operator name in the template's `src/operator.ts`, replaced by the project's name. */
const templateOperatorName = "name: 'tenant-operator'";

const namePattern = /^[a-z][a-z0-9-]{0,62}$/;

interface Manifest {
  version: string;
  engines?: Record<string, string>;
  dependencies: Record<string, string>;
  devDependencies?: Record<string, string>;
}

function homeostatManifest(): Manifest {
  return JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as Manifest;
}

/** Versions of the project's dependencies: the ones this homeostat is built and tested with. */
function dependencyVersions(manifest: Manifest): { dependencies: Record<string, string>; dev: Record<string, string> } {
  const pick = (from: Record<string, string> | undefined, names: string[]): Record<string, string> =>
    Object.fromEntries(
      names.map((n) => {
        const version = from?.[n];
        if (!version) throw new Error(`homeostat's package.json names no version of ${n}`);
        return [n, version];
      }),
    );
  return {
    dependencies: pick(manifest.dependencies, ['@kubernetes/client-node', 'zod']),
    dev: pick(manifest.devDependencies, ['@eslint/js', '@types/node', 'eslint', 'typescript', 'typescript-eslint']),
  };
}

/** Checks a project name; throws a {@link ScaffoldError} saying what is wrong. */
export function checkProjectName(name: string, reserved: readonly string[] = []): void {
  if (!namePattern.test(name)) {
    throw new ScaffoldError(
      `invalid project name ${JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name)}: use 1 to 63 ` +
        'lowercase letters, digits and dashes, starting with a letter (it names the npm package and the operator)',
    );
  }
  if (reserved.includes(name)) {
    throw new ScaffoldError(
      `invalid project name ${name}: the project depends on a package of that name (npm refuses it)`,
    );
  }
}

/** The `homeostat` dependency specifier: a range as given, or an absolute `file:` path to a tarball. */
function homeostatSpecifier(given: string | undefined, version: string): string {
  if (given === undefined) return `^${version}`;
  const spec = given.trim();
  const isPath = spec.startsWith('file:') || spec.includes('/') || spec.endsWith('.tgz');
  if (!isPath) {
    if (!/^[0-9A-Za-z.*^~<>=|+ -]{1,100}$/.test(spec)) {
      throw new ScaffoldError(
        `the homeostat dependency ${JSON.stringify(spec.slice(0, 100))} is neither a version range nor a tarball path`,
      );
    }
    return spec;
  }
  const absolute = resolve(spec.startsWith('file:') ? spec.slice('file:'.length) : spec);
  if (!existsSync(absolute) || !statSync(absolute).isFile()) {
    throw new ScaffoldError(`the homeostat tarball ${absolute} does not exist (make one with npm pack)`);
  }
  return `file:${absolute}`;
}

/** Refuses a target that is not a folder or not empty; returns whether it exists. */
function checkTarget(dir: string): boolean {
  if (!existsSync(dir)) return false;
  if (!statSync(dir).isDirectory()) throw new ScaffoldError(`${dir} exists and is not a folder`);
  const entries = readdirSync(dir).filter((e) => e !== '.git');
  if (entries.length > 0) {
    const shown = entries.slice(0, 5).join(', ') + (entries.length > 5 ? `, … (${entries.length} in all)` : '');
    throw new ScaffoldError(
      `refusing to scaffold into ${dir}: it is not empty (${shown}); choose a new or empty folder`,
    );
  }
  return true;
}

function templateFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? templateFiles(join(dir, e.name)) : [join(dir, e.name)]))
    .filter((f) => /\.(ts|ya?ml)$/.test(f) && !f.endsWith('.d.ts'));
}

/** A template source with its imports of homeostat's folders pointed at the public entry points. */
export function rewriteImports(source: string, file: string): string {
  const rewritten = source.replace(
    /(from\s+|import\s*\(\s*)'(\.\.\/[^']*)'/g,
    (match, prefix: string, spec: string) => {
      const entry = publicEntries[spec];
      if (!entry) throw new Error(`template ${file} imports ${spec}, which is not a public entry point of homeostat`);
      return `${prefix}'${entry}'`;
    },
  );
  return rewritten;
}

function packageJson(name: string, homeostat: string, manifest: Manifest): string {
  const versions = dependencyVersions(manifest);
  return `${JSON.stringify(
    {
      name,
      version: '0.1.0',
      private: true,
      description: 'A homeostat operator: Tenants (a Namespace with quota, limits, access and network policy per team)',
      ...(manifest.engines ? { engines: manifest.engines } : {}),
      scripts: {
        build: 'tsc -p .',
        typecheck: 'tsc -p . --noEmit',
        lint: 'eslint .',
        predemo: 'npm run build',
        demo: 'homeostat dev --operator dist/operator.js --examples examples',
        pretest: 'npm run build',
        test: 'node --test dist/*.test.js',
        precrds: 'npm run build',
        crds: 'homeostat crds --operator dist/operator.js --out-dir deploy/crds',
      },
      dependencies: { homeostat, ...versions.dependencies },
      devDependencies: versions.dev,
    },
    null,
    2,
  )}\n`;
}

const tsconfig = `${JSON.stringify(
  {
    compilerOptions: {
      target: 'ES2022',
      lib: ['ES2023'],
      module: 'nodenext',
      moduleResolution: 'nodenext',
      strict: true,
      noUncheckedIndexedAccess: true,
      esModuleInterop: true,
      skipLibCheck: true,
      sourceMap: true,
      types: ['node'],
      rootDir: 'src',
      outDir: 'dist',
    },
    include: ['src'],
  },
  null,
  2,
)}\n`;

const eslintConfig = `// Lint that catches real bugs in operator code (floating promises above all), with type information.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: { '@typescript-eslint/no-floating-promises': 'error', eqeqeq: ['error', 'always', { null: 'ignore' }] },
  },
  { files: ['**/*.mjs'], ...tseslint.configs.disableTypeChecked },
);
`;

function readme(name: string): string {
  return `# ${name}

An operator built on homeostat. homeostat keeps one durable Temporal
workflow per object and drives the cluster toward its spec, step by step, with retries, status
conditions, Kubernetes Events and the object's whole history in the Temporal UI.

Its one kind, \`Tenant\` (\`platform.example.com/v1alpha1\`, cluster-scoped), gives a team its home on
the cluster: a Namespace named after the Tenant, with a ResourceQuota, a LimitRange, a RoleBinding that
gives the team's group the \`edit\` ClusterRole, and a NetworkPolicy that denies ingress by default.
A child deleted or edited by hand is put back; deleting the Tenant has Kubernetes' garbage collector delete them (they name it as their owner).

After \`npm install\`, two commands:

\`\`\`sh
npm run demo   # the real local stack (Temporal + its UI, kube-apiserver), the operator, examples/ applied and reconciled to Ready
npm test       # the tests (src/tenant.test.ts) against the same real local stack
\`\`\`

The first run builds the servers from Go modules (Go ${goVersionNeeded()} or newer; minutes, once, cached in
\`~/.cache/homeostat\`). The demo keeps running until Ctrl-C and prints where to look: the Temporal UI
filtered to Tenants, \`kubectl\` with the stack's kubeconfig, the HTTP API with a token.

| file | what |
| --- | --- |
| \`src/tenant.ts\` | the \`Tenant\` spec (zod: also the CRD's schema), its plan (steps and their order) and the steps |
| \`src/operator.ts\` | the operator: what \`homeostat worker\`, \`bridge\`, \`api\`, \`dev\` and \`crds\` run |
| \`src/tenant.test.ts\` | tests on the real stack with \`homeostat/testing\` (\`node --test\`) |
| \`deploy/crds/\` | the generated CRDs, one file per kind (\`npm run crds\` after changing a spec; \`npm run crds -- --check\` says whether they are current) |
| \`examples/\` | objects the demo applies |

In a cluster, run \`homeostat worker --operator dist/operator.js\`, \`homeostat bridge --operator
dist/operator.js\` and (optionally) \`homeostat api --operator dist/operator.js\`, configured through
\`TEMPORAL_*\` and \`HOMEOSTAT_*\` environment variables, with the CRD from \`deploy/crds/\` applied.
`;
}

/** Everything the project consists of, by relative path. */
function projectFiles(name: string, homeostat: string | undefined): Map<string, string> {
  const manifest = homeostatManifest();
  checkProjectName(name, ['homeostat', ...Object.keys(dependencyVersions(manifest).dependencies)]);
  const files = new Map<string, string>();
  for (const file of templateFiles(templateDir)) {
    const path = relative(templateDir, file).split(sep).join('/');
    let text = readFileSync(file, 'utf8');
    if (path.endsWith('.ts')) text = rewriteImports(text, path);
    if (path === 'src/operator.ts') {
      if (text.split(templateOperatorName).length !== 2) throw new Error(`template ${path} lost its operator name`);
      text = text.replace(templateOperatorName, `name: '${name}'`);
    }
    files.set(path, text);
  }
  for (const [file, text] of crdFolderFiles(templateOperator)) files.set(`deploy/crds/${file}`, text);
  files.set('package.json', packageJson(name, homeostatSpecifier(homeostat, manifest.version), manifest));
  files.set('tsconfig.json', tsconfig);
  files.set('eslint.config.mjs', eslintConfig);
  files.set('.gitignore', 'node_modules/\ndist/\n');
  files.set('README.md', readme(name));
  return files;
}

/**
 * Writes a new operator project into `dir`. Refuses (with a {@link ScaffoldError}, before writing
 * anything) a path that is a file, a folder that is not empty, an invalid name or a missing tarball;
 * never overwrites a file.
 */
export async function scaffold(options: ScaffoldOptions): Promise<ScaffoldResult> {
  if (!options.dir.trim()) throw new ScaffoldError('give the folder to create the project in');
  const dir = resolve(options.dir);
  const name = options.name ?? basename(dir);
  if (options.name === undefined && !namePattern.test(name)) {
    throw new ScaffoldError(
      `the folder name ${JSON.stringify(name)} is not a valid project name (1 to 63 lowercase letters, digits and ` +
        'dashes, starting with a letter): pass --name <name>',
    );
  }
  const files = projectFiles(name, options.homeostat);
  const existed = checkTarget(dir);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new ScaffoldError(`cannot create ${dir}: ${err instanceof Error ? err.message : String(err)}`);
  }
  for (const [path, text] of [...files].sort(([a], [b]) => a.localeCompare(b))) {
    const target = join(dir, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text, { flag: 'wx' }); // never overwrite (a file appearing meanwhile fails the scaffold)
  }
  const fromHere = relative(process.cwd(), dir);
  const shown = fromHere === '' ? '.' : fromHere.startsWith('..') ? dir : fromHere;
  options.log(`${existed ? 'wrote' : 'created'} ${shown}: the ${name} operator (Tenant), ${files.size} files`);
  options.log('');
  options.log('next:');
  if (shown !== '.') options.log(`  cd ${shown}`);
  options.log('  npm install');
  options.log('  npm run demo   # the operator on the real local stack, examples/ reconciled to Ready');
  options.log('  npm test       # its tests, on the same stack');
  return { dir, name, files: [...files.keys()].sort() };
}
