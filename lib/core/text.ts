/**
 * Hidden characters: what shows nothing yet changes what a reader sees. One definition for the
 * names the API accepts (lib/wire/schemas.ts refuses them) and the text Roster mails or renders
 * (lib/mail/safety.ts strips them, for values stored before the rule).
 *
 * Hidden: every format character (`\p{Cf}`: the bidirectional embeddings, overrides, isolates and
 * marks, zero-width space, word joiner, invisible operators, byte-order mark, soft hyphen, Mongolian
 * vowel separator, tag characters) and every other default-ignorable code point (Hangul fillers,
 * the combining grapheme joiner …), with two exceptions that real names need and that stay visible:
 * - a zero-width joiner or non-joiner between two visible characters (emoji sequences such as
 *   U+1F469 U+200D U+1F4BB, Persian and Indic spellings);
 * - a variation selector right after a visible character (U+2764 U+FE0F, CJK ideographic variants).
 * A joiner at either end or beside a space, or a selector on its own, is hidden.
 */
const IGNORABLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/u;
const VARIATION_SELECTOR = /\p{Variation_Selector}/u;
const JOINERS = new Set(['\u200c', '\u200d']);
const SPACE = /\s/u;

const isVisible = (c: string | undefined): boolean => c !== undefined && !IGNORABLE.test(c) && !SPACE.test(c);

/** The text with every hidden character (above) removed; judged on the text as given. */
export const withoutHidden = (value: string): string => {
  if (!IGNORABLE.test(value)) return value;
  const chars = Array.from(value);
  // What the previous kept character was: a visible one, a selector on one, or anything else.
  let before: 'visible' | 'selected' | 'other' = 'other';
  let kept = '';
  chars.forEach((c, i) => {
    let keep: boolean;
    if (!IGNORABLE.test(c)) {
      keep = true;
      before = SPACE.test(c) ? 'other' : 'visible';
    } else if (VARIATION_SELECTOR.test(c)) {
      keep = before === 'visible';
      before = keep ? 'selected' : 'other';
    } else {
      keep = JOINERS.has(c) && before !== 'other' && isVisible(chars[i + 1]);
      before = 'other';
    }
    if (keep) kept += c;
  });
  return kept;
};

export const hasHidden = (value: string): boolean => withoutHidden(value) !== value;
