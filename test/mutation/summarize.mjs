// Writes test/mutation/report.md from Stryker's report (the incremental file, which is a complete
// mutation-testing-report-schema report): the score per file, the score the same run gives when only
// the tests that existed before issue 17 count (every killing test is recorded: disableBail), and every
// mutant left alive with the reason from notes.json when one is written down.
// Run by `npm run mutation` after Stryker; `node test/mutation/summarize.mjs` redoes it alone.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import process from 'node:process';

const dir = new globalThis.URL('.', import.meta.url);
const report = JSON.parse(readFileSync(new globalThis.URL('stryker-incremental.json', dir), 'utf8'));
const notesFile = new globalThis.URL('notes.json', dir);
/**
 * Reasons for surviving mutants, keyed by what the mutant is rather than where it is (see `noteKey`),
 * so that a reason survives edits elsewhere in the file.
 */
const notes = existsSync(notesFile) ? JSON.parse(readFileSync(notesFile, 'utf8')) : {};

// The describe blocks written for issue 17: a test whose name starts with one of these did not exist
// before, so "before" is the same run with these tests taken away.
const addedFor17 = [
  'object workflow status decisions ',
  'reconciler plan rules ',
  'error classification ',
  'Backoff options ',
  'CoalescingQueue options and edges ',
  'configuration parsing ',
  'predicate rules at their edges ',
  'status comparison ',
  'CRD generation at its edges ',
  'delivery merging ',
  'delivery to Temporal ',
  'configuration loaders ',
  'CRD schema rewriting at its edges ',
  'structuralSchema on hand-written JSON Schema ',
  'CEL rules at their edges ',
  'RE2 patterns at their edges ',
  'surviving mutants of ',
];

const testName = new Map();
for (const file of Object.values(report.testFiles ?? {})) {
  for (const test of file.tests) testName.set(test.id, test.name);
}
const isOld = (id) => !addedFor17.some((prefix) => (testName.get(id) ?? '').startsWith(prefix));

const detected = new Set(['Killed', 'Timeout']);
const valid = new Set(['Killed', 'Timeout', 'Survived', 'NoCoverage']);

/** The status a mutant would have had with the old tests only. */
function statusBefore(m) {
  const covered = (m.coveredBy ?? []).filter(isOld);
  if (m.status === 'Killed') {
    if ((m.killedBy ?? []).some(isOld)) return 'Killed';
    return covered.length > 0 ? 'Survived' : 'NoCoverage';
  }
  if (m.status === 'Timeout') return covered.length > 0 ? 'Timeout' : 'NoCoverage';
  if (m.status === 'Survived' && covered.length === 0) return 'NoCoverage';
  return m.status;
}

const squash = (s) => s.replace(/\s+/g, ' ').trim();

/**
 * The key of a mutant in notes.json: the file, the mutator, the trimmed line it starts on, the code it
 * replaces and what it puts there. Line numbers are not in it: they move whenever code above changes.
 */
function noteKey(file, lines, m) {
  const { start, end } = m.location;
  const original =
    start.line === end.line
      ? lines[start.line - 1].slice(start.column - 1, end.column - 1)
      : [
          lines[start.line - 1].slice(start.column - 1),
          ...lines.slice(start.line, end.line - 1),
          lines[end.line - 1].slice(0, end.column - 1),
        ].join('\n');
  const line = squash(lines[start.line - 1]);
  return `${file} ${m.mutatorName} in \`${line}\`: \`${squash(original).slice(0, 120)}\` → \`${squash(m.replacement ?? '').slice(0, 120)}\``;
}

const pct = (d, v) => (v === 0 ? 'n/a' : `${((100 * d) / v).toFixed(1)}%`);
const rows = [];
const survivors = [];
const totals = { before: [0, 0], after: [0, 0], static: 0 };
for (const [file, { mutants, source }] of Object.entries(report.files).sort(([a], [b]) => a.localeCompare(b))) {
  const lines = source.split('\n');
  const count = { Killed: 0, Timeout: 0, Survived: 0, NoCoverage: 0, Ignored: 0 };
  let beforeDetected = 0;
  let afterDetected = 0;
  let validCount = 0;
  for (const m of mutants) {
    count[m.status] = (count[m.status] ?? 0) + 1;
    if (m.status === 'Ignored') totals.static++;
    if (!valid.has(m.status)) continue;
    validCount++;
    if (detected.has(m.status)) afterDetected++;
    if (detected.has(statusBefore(m))) beforeDetected++;
    if (!detected.has(m.status)) {
      const { line, column } = m.location.start;
      const where = `${file}:${line}:${column} ${m.mutatorName}`;
      const code = (lines[line - 1] ?? '').trim();
      const note = notes[noteKey(file, lines, m)];
      survivors.push({ where, status: m.status, replacement: m.replacement ?? '', code, note });
    }
  }
  totals.before[0] += beforeDetected;
  totals.after[0] += afterDetected;
  totals.before[1] += validCount;
  totals.after[1] += validCount;
  rows.push(
    `| ${file} | ${pct(beforeDetected, validCount)} | ${pct(afterDetected, validCount)} | ${count.Killed} | ${count.Timeout} | ${count.Survived} | ${count.NoCoverage} | ${count.Ignored} |`,
  );
}

const cell = (s) => s.replace(/\|/g, '\\|').replace(/\s+/g, ' ').slice(0, 90);
const out = [
  '# Mutation report (generated by test/mutation/summarize.mjs — do not edit)',
  '',
  `Stryker ${report.framework?.version ?? ''} over the unit tests. Score = (killed + timed out) / (killed + timed out + survived + no coverage).`,
  '"Before" is the same run with the tests written for issue 17 taken away (see `addedFor17` in the script).',
  '',
  '| file | before | after | killed | timeout | survived | no coverage | ignored (static) |',
  '| --- | --- | --- | --- | --- | --- | --- | --- |',
  ...rows,
  `| **all files** | **${pct(...totals.before)}** | **${pct(...totals.after)}** | | | | | ${totals.static} |`,
  '',
  `## Mutants left alive (${survivors.length})`,
  '',
  'Reasons are kept in test/mutation/notes.json; a mutant without one is an open gap.',
  '',
  '| where | status | mutated to | code | why it is left |',
  '| --- | --- | --- | --- | --- |',
  ...survivors.map(
    (s) =>
      `| ${s.where} | ${s.status} | \`${cell(s.replacement)}\` | \`${cell(s.code)}\` | ${s.note ? cell(s.note) : '**open**'} |`,
  ),
  '',
];
writeFileSync(new globalThis.URL('report.md', dir), out.join('\n'));
process.stdout.write(
  `mutation score: before ${pct(...totals.before)}, after ${pct(...totals.after)}; ${survivors.length} alive\n`,
);
