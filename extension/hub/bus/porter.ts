// Martin Porter's stemmer (1980), the algorithm of SQLite FTS5's `porter` tokenizer: "quotes",
// "quoted" and "quoting" all become "quot", so a search for one form finds the others. English
// words of a–z only; anything else is its own stem.

const VOWEL = /[aeiou]/;

/** Whether s[i] is a consonant (y is one after a vowel or at the start). */
function consonant(s: string, i: number): boolean {
  const c = s[i];
  if (VOWEL.test(c)) return false;
  if (c === 'y') return i === 0 || !consonant(s, i - 1);
  return true;
}

/** m, the number of vowel–consonant sequences in s: [C](VC)^m[V]. */
function measure(s: string): number {
  let m = 0;
  let i = 0;
  const n = s.length;
  while (i < n && consonant(s, i)) i++;
  while (i < n) {
    while (i < n && !consonant(s, i)) i++;
    if (i >= n) break;
    while (i < n && consonant(s, i)) i++;
    m++;
  }
  return m;
}

const hasVowel = (s: string) => [...s].some((_, i) => !consonant(s, i));
const doubleConsonant = (s: string) =>
  s.length >= 2 && s[s.length - 1] === s[s.length - 2] && consonant(s, s.length - 1);
/** *o: ends consonant–vowel–consonant, the last not w, x or y (hop, not hoop). */
function cvc(s: string): boolean {
  const n = s.length;
  if (n < 3 || !consonant(s, n - 1) || consonant(s, n - 2) || !consonant(s, n - 3)) return false;
  return !'wxy'.includes(s[n - 1]);
}

/** s with its suffix `from` replaced by `to` when the stem before it has m > min; undefined if s does not end so. */
function replace(s: string, rules: readonly (readonly [string, string])[], min: number): string | undefined {
  for (const [from, to] of rules)
    if (s.endsWith(from)) {
      const stem = s.slice(0, s.length - from.length);
      return measure(stem) > min ? stem + to : s;
    }
  return undefined;
}

const STEP2 = [
  ['ational', 'ate'],
  ['tional', 'tion'],
  ['enci', 'ence'],
  ['anci', 'ance'],
  ['izer', 'ize'],
  ['bli', 'ble'],
  ['alli', 'al'],
  ['entli', 'ent'],
  ['eli', 'e'],
  ['ousli', 'ous'],
  ['ization', 'ize'],
  ['ation', 'ate'],
  ['ator', 'ate'],
  ['alism', 'al'],
  ['iveness', 'ive'],
  ['fulness', 'ful'],
  ['ousness', 'ous'],
  ['aliti', 'al'],
  ['iviti', 'ive'],
  ['biliti', 'ble'],
  ['logi', 'log'],
] as const;
const STEP3 = [
  ['icate', 'ic'],
  ['ative', ''],
  ['alize', 'al'],
  ['iciti', 'ic'],
  ['ical', 'ic'],
  ['ful', ''],
  ['ness', ''],
] as const;
const STEP4 = [
  'al', 'ance', 'ence', 'er', 'ic', 'able', 'ible', 'ant', 'ement', 'ment', 'ent', 'ion', 'ou', 'ism',
  'ate', 'iti', 'ous', 'ive', 'ize',
] as const; // prettier-ignore

export function porterStem(word: string): string {
  if (word.length <= 2 || !/^[a-z]+$/.test(word)) return word;
  let s = word;
  // Step 1a: plurals.
  if (s.endsWith('sses')) s = s.slice(0, -2);
  else if (s.endsWith('ies')) s = s.slice(0, -2);
  else if (!s.endsWith('ss') && s.endsWith('s')) s = s.slice(0, -1);
  // Step 1b: -ed, -ing.
  if (s.endsWith('eed')) {
    if (measure(s.slice(0, -3)) > 0) s = s.slice(0, -1);
  } else {
    const cut =
      s.endsWith('ed') && hasVowel(s.slice(0, -2)) ? 2 : s.endsWith('ing') && hasVowel(s.slice(0, -3)) ? 3 : 0;
    if (cut > 0) {
      s = s.slice(0, -cut);
      if (s.endsWith('at') || s.endsWith('bl') || s.endsWith('iz')) s += 'e';
      else if (doubleConsonant(s) && !'lsz'.includes(s[s.length - 1])) s = s.slice(0, -1);
      else if (measure(s) === 1 && cvc(s)) s += 'e';
    }
  }
  // Step 1c: y after a vowel-holding stem becomes i.
  if (s.endsWith('y') && hasVowel(s.slice(0, -1))) s = `${s.slice(0, -1)}i`;
  // Steps 2 and 3: double and single suffixes, when what is left has m > 0.
  s = replace(s, STEP2, 0) ?? s;
  s = replace(s, STEP3, 0) ?? s;
  // Step 4: a suffix goes when what is left has m > 1 (-ion only after s or t).
  for (const suffix of STEP4)
    if (s.endsWith(suffix)) {
      const stem = s.slice(0, s.length - suffix.length);
      if (measure(stem) > 1 && (suffix !== 'ion' || /[st]$/.test(stem))) s = stem;
      break;
    }
  // Step 5: a final e, and a double l.
  if (s.endsWith('e')) {
    const stem = s.slice(0, -1);
    const m = measure(stem);
    if (m > 1 || (m === 1 && !cvc(stem))) s = stem;
  }
  if (s.endsWith('ll') && measure(s) > 1) s = s.slice(0, -1);
  return s;
}
