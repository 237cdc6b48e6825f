/**
 * `npm run crds`: writes `deploy/crds/` (one file per kind and their kustomization) from the built-in
 * reconcilers' zod schemas. `npm run crds -- --check` fails when the committed files differ from the
 * generated ones.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { builtinOperator } from '../builtin';
import { crdFolderFiles, crdFolderProblems, writeCrdFolder } from '../cli/crd-folder';

const dir = join(__dirname, '..', 'deploy', 'crds');

function main(): number {
  const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } } });
  const files = crdFolderFiles(builtinOperator);
  if (values.check) {
    const problems = crdFolderProblems(dir, files);
    for (const problem of problems) process.stderr.write(`deploy/crds/${problem}: run npm run crds\n`);
    return problems.length ? 1 : 0;
  }
  for (const file of writeCrdFolder(dir, files)) process.stdout.write(`wrote deploy/crds/${file}\n`);
  return 0;
}

process.exit(main());
