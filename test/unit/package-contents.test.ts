/**
 * What the package ships (issue 29): the guides and the API reference the README points to (docs/),
 * the license package.json names, and no source map that points to a file the package does not hold.
 * The file list is npm's own (`npm pack --dry-run --json`, without the prepack build); the maps are
 * read from what the last build left in dist/ (`npm test` builds before the tests run).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import ts from 'typescript';

const root = join(__dirname, '..', '..');

interface SourceMap {
  sources: string[];
  sourcesContent?: (string | null)[];
  sourceRoot?: string;
}

function packedFiles(): string[] {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const [packed] = JSON.parse(out.slice(out.indexOf('['))) as { files: { path: string }[] }[];
  return packed!.files.map((f) => f.path).sort();
}

const shipped = packedFiles();

/** The source map a shipped file carries or points to, with the shipped path it is read from; else undefined. */
function mapOf(file: string): { map: SourceMap; at: string } | undefined {
  const text = readFileSync(join(root, file), 'utf8');
  if (file.endsWith('.map')) return { map: JSON.parse(text) as SourceMap, at: file };
  const url = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(text)?.[1];
  if (!url) return undefined;
  if (url.startsWith('data:')) {
    const json = Buffer.from(url.slice(url.indexOf(',') + 1), 'base64').toString('utf8');
    return { map: JSON.parse(json) as SourceMap, at: file };
  }
  const target = normalize(join(dirname(file), url));
  if (!shipped.includes(target)) return { map: { sources: [`(the map itself) ${target}`] }, at: file };
  return { map: JSON.parse(readFileSync(join(root, target), 'utf8')) as SourceMap, at: target };
}

/** The sources of a map that are neither shipped nor carried in the map's `sourcesContent`. */
function missingSources({ map, at }: { map: SourceMap; at: string }): string[] {
  return map.sources.filter((source, i) => {
    if (typeof map.sourcesContent?.[i] === 'string') return false;
    return !shipped.includes(normalize(join(dirname(at), map.sourceRoot ?? '', source)));
  });
}

describe('the package tarball', () => {
  it('given the docs folder the README points to, it ships every file of it', () => {
    const docs = readdirSync(join(root, 'docs'), { recursive: true, encoding: 'utf8' })
      .map((f) => `docs/${f}`)
      .filter((f) => f.endsWith('.md'));
    expect(docs).toEqual(expect.arrayContaining(['docs/writing-a-reconciler.md', 'docs/api/authoring.md']));
    expect(docs.filter((f) => !shipped.includes(f))).toEqual([]);
    const readmeLinks = [...readFileSync(join(root, 'README.md'), 'utf8').matchAll(/\]\((docs\/[^)#\s]+)/g)].map(
      (m) => m[1]!,
    );
    expect(readmeLinks.filter((link) => !shipped.includes(link))).toEqual([]);
  });

  it('given the license package.json names, it ships the Apache 2.0 text as LICENSE', () => {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { license: string };
    expect(manifest.license).toBe('Apache-2.0');
    expect(shipped).toContain('LICENSE');
    const text = readFileSync(join(root, 'LICENSE'), 'utf8');
    expect(text).toContain('Apache License');
    expect(text).toContain('Version 2.0, January 2004');
    expect(text).toContain('END OF TERMS AND CONDITIONS');
  });

  it('given the build configuration, it emits no source maps for the compiled files (their sources are not shipped)', () => {
    const config = ts.getParsedCommandLineOfConfigFile(
      join(root, 'tsconfig.build.json'),
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: (d) => {
          throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
        },
      },
    );
    expect({
      sourceMap: config?.options.sourceMap ?? false,
      inlineSourceMap: config?.options.inlineSourceMap ?? false,
      declarationMap: config?.options.declarationMap ?? false,
    }).toEqual({ sourceMap: false, inlineSourceMap: false, declarationMap: false });
  });

  it('given the files the last build left in dist/, no shipped source map names a source the tarball neither holds nor embeds', () => {
    const readable = shipped.filter((f) => /\.(js|map)$/.test(f) && existsSync(join(root, f)));
    const dangling = readable.flatMap((file) => {
      const found = mapOf(file);
      return found ? missingSources(found).map((source) => `${file} → ${source}`) : [];
    });
    expect(dangling).toEqual([]);
  });
});
