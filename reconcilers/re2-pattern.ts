/**
 * JavaScript regular expressions rewritten for kube-apiserver, which compiles a CRD's `pattern` and
 * CEL's `matches()` with Go's RE2. What RE2 cannot express (lookaround, backreferences) is refused
 * (`undefined`): the caller leaves such a pattern out of the CRD, and the zod schema keeps enforcing
 * it in the worker. A rewritten pattern accepts exactly what the JavaScript one accepts, or it is
 * refused: admission must never turn away a value the zod schema takes.
 */

/** JavaScript's `\s` (ECMAScript WhiteSpace and LineTerminator), as members of an RE2 class. */
const jsWhitespace =
  '\\t\\n\\v\\f\\r \\x{00a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}';

/** Unicode general categories, which RE2 and JavaScript both know by these names. */
const categories = new Set(
  'L Lu Ll Lt Lm Lo M Mn Mc Me N Nd Nl No P Pc Pd Ps Pe Pi Pf Po S Sm Sc Sk So Z Zs Zl Zp C Cc Cf Co Cs'.split(' '),
);

/** RE2 refuses repetition counts above 1000. */
const maxRepeat = 1000;

/**
 * The RE2 form of `re` (flags `i`, `m`, `s` become inline flags), or `undefined` when RE2 cannot
 * express it exactly.
 */
export function re2Pattern(re: RegExp): string | undefined {
  if (re.flags.includes('v')) return undefined; // set notation ([A--B]) has no RE2 form
  const src = re.source;
  let out = '';
  let inClass = false;
  /**
   * Inside a class, a `-` beside a class escape (`[\s-_]`, `[a-\d]`) is a literal dash to JavaScript
   * (no range can end in a set) but a malformed range to RE2: it is written `\-`. `at` is the index
   * of the character after the escape.
   */
  const literalDashAfterSet = (at: number): number => {
    if (inClass && src.charAt(at) === '-' && src.charAt(at + 1) !== ']') {
      out += '\\-';
      return 1;
    }
    return 0;
  };
  for (let i = 0; i < src.length; i++) {
    const c = src.charAt(i);
    if (c === '\\') {
      const n = src.charAt(i + 1);
      if (n === '') return undefined;
      if (/[0-9]/.test(n) || n === 'k' || n === 'c') return undefined; // backreferences, \0, control escapes
      if (n === 'u' || n === 'x') {
        const m =
          n === 'x'
            ? /^x([0-9a-fA-F]{2})/.exec(src.slice(i + 1))
            : re.flags.includes('u')
              ? /^u(?:\{([0-9a-fA-F]{1,6})\}|([0-9a-fA-F]{4}))/.exec(src.slice(i + 1))
              : /^u([0-9a-fA-F]{4})/.exec(src.slice(i + 1));
        const hex = m?.[1] ?? m?.[2];
        // Surrogate halves (a non-BMP character spelled in UTF-16) are not characters to RE2.
        if (!m || !hex || (parseInt(hex, 16) >= 0xd800 && parseInt(hex, 16) <= 0xdfff)) return undefined;
        out += `\\x{${hex}}`;
        i += m[0].length;
        continue;
      }
      if (n === 's') {
        out += inClass ? jsWhitespace : `[${jsWhitespace}]`;
        i += 1;
        i += literalDashAfterSet(i + 1);
        continue;
      }
      if (n === 'S') {
        if (inClass) return undefined; // a negated set inside a class has no RE2 form
        out += `[^${jsWhitespace}]`;
        i += 1;
        continue;
      }
      if (n === 'p' || n === 'P') {
        if (!re.flags.includes('u')) return undefined; // without u, `\p{Lu}` is the text "p{Lu}"
        const m = /^[pP]\{(?:(?:General_Category|gc)=)?([A-Za-z]+)\}/.exec(src.slice(i + 1));
        if (!m?.[1] || !categories.has(m[1])) return undefined; // scripts and binary properties differ
        out += `\\${n}{${m[1]}}`;
        i += m[0].length;
        i += literalDashAfterSet(i + 1);
        continue;
      }
      if (n === '/') {
        out += '/';
        i += 1;
        continue;
      }
      // Escapes both read alike; any other letter means something else (or nothing) to RE2.
      if (/[A-Za-z]/.test(n) && !/[dDwWtnrfv]/.test(n) && !(n === 'b' && !inClass) && !(n === 'B' && !inClass)) {
        return undefined;
      }
      out += c + n;
      i += 1;
      if (/[dDwW]/.test(n)) i += literalDashAfterSet(i + 1);
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      // A dash before a class escape is literal too (`[a-\d]`).
      out += c === '-' && /^\\[sdDwWpP]/.test(src.slice(i + 1)) ? '\\-' : c;
      continue;
    }
    if (c === '[') {
      // `[^]` (anything) and `[]` (nothing) mean something else to RE2.
      if (src.startsWith('[^]', i) || src.startsWith('[]', i)) return undefined;
      inClass = true;
      out += c;
      if (src.charAt(i + 1) === '^') {
        out += '^';
        i += 1;
      }
      continue;
    }
    if (c === '(' && src.charAt(i + 1) === '?') {
      const rest = src.slice(i + 2);
      if (/^(=|!|<=|<!)/.test(rest)) return undefined; // lookahead and lookbehind
      if (rest.startsWith('<')) {
        out += '(?P<'; // named group, in the spelling every RE2 version reads
        i += 2;
        continue;
      }
    }
    if (c === '.' && !re.flags.includes('s')) {
      out += '[^\\n\\r\\x{2028}\\x{2029}]'; // what JavaScript's `.` refuses; RE2's refuses only \n
      continue;
    }
    if (c === '{') {
      const m = /^\{(\d+)(?:,(\d*))?\}/.exec(src.slice(i));
      if (m && (Number(m[1]) > maxRepeat || (m[2] !== undefined && m[2] !== '' && Number(m[2]) > maxRepeat))) {
        return undefined;
      }
    }
    out += c;
  }
  const flags = ['i', 'm', 's'].filter((f) => re.flags.includes(f)).join('');
  return flags ? `(?${flags})${out}` : out;
}
