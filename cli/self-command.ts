/**
 * How to run this installation's `homeostat` CLI again: as a child process of `homeostat dev`, and as
 * a command a user types in a shell — `npx homeostat` in a project that installed the package, the
 * compiled file or the sources under tsx in homeostat's own repository.
 */
import { join, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';

const fromSources = __filename.endsWith('.ts');
const entry = join(__dirname, fromSources ? 'homeostat.ts' : 'homeostat.js');

/**
 * The arguments of `node` that run this CLI (compiled, or the sources under tsx). tsx is named by its
 * file, not its package name, which `node --import` would look up from the working folder: the CLI
 * runs from any folder.
 */
export function cliNodeArgs(): string[] {
  return fromSources ? ['--import', pathToFileURL(require.resolve('tsx')).href, entry] : [entry];
}

/** A word quoted for a POSIX shell, unless it needs no quotes. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The command that runs this CLI from a shell in `cwd`: `npx homeostat` where the package is
 * installed (a project made by `homeostat init`), else its entry file relative to `cwd`
 * (`npx tsx cli/homeostat.ts` from homeostat's sources).
 */
export function cliShellCommand(cwd: string = process.cwd()): string {
  if (__dirname.includes(`${sep}node_modules${sep}`)) return 'npx homeostat';
  const file = shellWord(relative(cwd, entry));
  return fromSources ? `npx tsx ${file}` : `node ${file}`;
}
