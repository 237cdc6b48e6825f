/**
 * `npm run docs:api`: the API reference of the package's public entry points (docs/api/*.md), generated
 * by TypeDoc with typedoc-plugin-markdown from the TSDoc of the code — every export with every member
 * (properties, methods, parameters, options with their defaults), and the types they reference that
 * an entry point does not export itself (typedoc-plugin-missing-exports, under "internal" on the same
 * page). `-- --check` fails when the committed reference differs from the code (run by `npm test`), so
 * the reference cannot go stale; the output holds no source line numbers or commit ids, so only a change
 * of the public surface or its TSDoc changes it.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import ts from 'typescript';

const root = join(__dirname, '..');
const outDir = join(root, 'docs', 'api');

/** The public entry points: the `exports` map of package.json, by import path, and their pages. */
const entries: { specifier: string; file: string; title: string; page: string }[] = [
  { specifier: 'homeostat', file: 'reconcilers/index.ts', title: 'Authoring API', page: 'authoring' },
  { specifier: 'homeostat/runtime', file: 'runtime/index.ts', title: 'Runtime', page: 'runtime' },
  { specifier: 'homeostat/testing', file: 'testing/index.ts', title: 'Testing', page: 'testing' },
  { specifier: 'homeostat/builtin', file: 'builtin/index.ts', title: 'The built-in operator', page: 'builtin' },
];

/** The leading TSDoc block of an entry file, as Markdown: the page's introduction. */
function moduleDoc(file: string): string {
  const match = /^\/\*\*([\s\S]*?)\*\//.exec(readFileSync(join(root, file), 'utf8').trimStart());
  return (match?.[1] ?? '')
    .split('\n')
    .map((l) => l.replace(/^\s*\* ?/, ''))
    .join('\n')
    .trim();
}

/**
 * Whether a type alias is better documented by the members TypeScript resolves it to than by its
 * right-hand side: a type computed by a generic or `typeof` expression (`z.infer<typeof schema>`,
 * `Readonly<…>`) that resolves to an object type with properties and is not a library's own interface
 * or class (`Promise<T>` stays `Promise<T>`).
 */
function expandable(node: ts.TypeNode, type: ts.Type): boolean {
  const computed =
    (ts.isTypeReferenceNode(node) && (node.typeArguments?.length ?? 0) > 0) ||
    ts.isTypeQueryNode(node) ||
    ts.isIndexedAccessTypeNode(node) ||
    ts.isMappedTypeNode(node) ||
    ts.isConditionalTypeNode(node);
  if (!computed || !(type.flags & ts.TypeFlags.Object) || type.isUnion()) return false;
  if (type.getCallSignatures().length > 0 || type.getProperties().length === 0) return false;
  if ((type as ts.ObjectType).objectFlags & (ts.ObjectFlags.Mapped | ts.ObjectFlags.Anonymous)) return true;
  const declarations = type.getSymbol()?.declarations ?? [];
  return declarations.length > 0 && declarations.every((d) => !d.getSourceFile().fileName.includes('/node_modules/'));
}

/** Runs TypeDoc over the entry points, writing one Markdown page per entry point into `out`. */
async function generate(out: string): Promise<void> {
  const { Application, Comment, Converter, LogLevel, ReflectionKind } = await import('typedoc');
  const app = await Application.bootstrapWithPlugins({
    entryPoints: entries.map((e) => join(root, e.file)),
    tsconfig: join(root, 'tsconfig.build.json'),
    plugin: ['typedoc-plugin-markdown', 'typedoc-plugin-missing-exports'],
    out,
    name: 'homeostat',
    readme: 'none',
    // No "defined in" file:line links: they would change with every edit of the code, not of the API.
    disableSources: true,
    excludeExternals: true,
    excludePrivate: true,
    excludeProtected: true,
    logLevel: LogLevel.Warn,
    validation: { notExported: false, invalidLink: true, rewrittenLink: true, notDocumented: false },
    // typedoc-plugin-missing-exports: referenced internal types on the page that references them.
    internalModule: 'internal',
    // typedoc-plugin-markdown: one page per entry point, members in tables.
    outputFileStrategy: 'modules',
    indexFormat: 'table',
    entryFileName: 'README.md',
    flattenOutputFiles: true,
    hideBreadcrumbs: true,
    hidePageHeader: true,
    useCodeBlocks: true,
    parametersFormat: 'table',
    interfacePropertiesFormat: 'table',
    classPropertiesFormat: 'table',
    typeAliasPropertiesFormat: 'table',
    enumMembersFormat: 'table',
    propertyMembersFormat: 'table',
    typeDeclarationFormat: 'table',
  } as Record<string, unknown>);
  // A type alias computed from other types is documented with the members TypeScript resolves it to
  // (see `expandable`): TypeDoc's @useDeclaredType, added here so the code need not carry it.
  app.converter.on(Converter.EVENT_CREATE_DECLARATION, (context, reflection) => {
    if (reflection.kind !== ReflectionKind.TypeAlias) return;
    const symbol = context.getSymbolFromReflection(reflection);
    const declaration = symbol?.declarations?.find(ts.isTypeAliasDeclaration);
    if (!symbol || !declaration || !expandable(declaration.type, context.checker.getDeclaredTypeOfSymbol(symbol)))
      return;
    reflection.comment ??= new Comment();
    reflection.comment.modifierTags.add('@useDeclaredType');
  });
  // Each entry point's module is named after its import path, its page after `page`, and introduced
  // by the file's leading TSDoc block.
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const module of context.project.children ?? []) {
      const entry = entries.find((e) => module.name === e.file.replace(/\/index\.ts$/, ''));
      if (!entry) throw new Error(`docs:api: no entry point for the module ${module.name}`);
      module.name = entry.page;
      module.comment = new Comment([
        { kind: 'text', text: `\`import … from '${entry.specifier}'\` — ${entry.title}.\n\n${moduleDoc(entry.file)}` },
      ]);
    }
  });
  // The types an entry point's exports refer to without exporting them get a page of their own.
  app.converter.on(Converter.EVENT_RESOLVE_END, (context) => {
    for (const module of context.project.children ?? []) {
      const entry = entries.find((e) => e.page === module.name);
      const internal = module.children?.find((c) => c.name === 'internal');
      if (!entry || !internal) continue;
      internal.comment = new Comment([
        {
          kind: 'text',
          text:
            `Types that the exports of \`${entry.specifier}\` refer to but that it does not export: their ` +
            'shape is part of the API (values of these types are passed in or handed out), their names are ' +
            'not — they cannot be imported from the package.',
        },
      ]);
    }
  });
  const project = await app.convert();
  if (!project) throw new Error('docs:api: TypeDoc could not convert the entry points');
  await app.generateOutputs(project);
  if (app.logger.hasErrors() || app.logger.hasWarnings()) {
    throw new Error('docs:api: TypeDoc reported problems (above); fix the TSDoc they name');
  }
}

/** The Markdown files under `dir`, relative to it, sorted. */
function pages(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .sort();
}

async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  const fresh = mkdtempSync(join(tmpdir(), 'homeostat-api-docs-'));
  try {
    await generate(fresh);
    const stale = [...new Set([...pages(fresh), ...pages(outDir)])].filter(
      (f) =>
        !existsSync(join(fresh, f)) ||
        !existsSync(join(outDir, f)) ||
        readFileSync(join(fresh, f), 'utf8') !== readFileSync(join(outDir, f), 'utf8'),
    );
    if (check) {
      for (const f of stale) process.stderr.write(`docs/api/${f} is out of date: run npm run docs:api\n`);
      if (stale.length > 0) process.exit(1);
      process.stdout.write('docs/api up to date\n');
      return;
    }
    rmSync(outDir, { recursive: true, force: true });
    for (const f of pages(fresh)) {
      mkdirSync(join(outDir, f, '..'), { recursive: true });
      writeFileSync(join(outDir, f), readFileSync(join(fresh, f)));
      process.stdout.write(`wrote ${relative(root, join(outDir, f))}\n`);
    }
  } finally {
    rmSync(fresh, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
