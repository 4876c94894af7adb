//! What a character is to the keyword analyzer: part of a word, part of a run of a script
//! written without spaces (read as character pairs, as Lucene's and Elasticsearch's `cjk`
//! analyzers do), a mark or format character that goes on whatever it follows, or a
//! separator.

use unicode_normalization::char::is_combining_mark;
use unicode_script::{Script, UnicodeScript};

use super::language::Letters;
use super::normalize::ascii_digit;
use super::Revision;

/// Scripts written without spaces between words; runs of one group are cut into pairs (from
/// [`Revision::V7`] on, Thai, Lao, Khmer and Myanmar runs into their words instead:
/// [`PairGroup::has_dictionary_words`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairGroup {
    /// Han, Hiragana, Katakana, Hangul and Bopomofo: one group, as Lucene's CJK bigrams.
    Cjk,
    Thai,
    Lao,
    Khmer,
    Myanmar,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CharClass {
    /// A letter, digit or mark of a word.
    Word,
    /// A character of a run read as pairs.
    Pair(PairGroup),
    /// From [`Revision::V4`] on: a combining mark or a format character Unicode's word
    /// boundaries (UAX #29, rule WB4) read as part of whatever it follows: a soft hyphen
    /// (`Donau\u{AD}dampf`), a zero-width joiner or non-joiner (Sinhala's `ශ්‍රී`, Malayalam's
    /// and Bengali's conjuncts held apart), a variation selector after an ideograph, a
    /// combining cedilla of text in decomposed form (`franc\u{327}ais`). Not the zero-width
    /// space, which marks a break; nor a non-joiner after an Arabic-script letter
    /// ([`splits_after`]).
    Extend,
    Separator,
}

impl PairGroup {
    /// Whether `revision` reads a run of the group as its words, cut by ICU's dictionary of
    /// the script's language ([`super::dictionary_words`]), not as pairs: Thai, Lao, Khmer
    /// and Myanmar from [`Revision::V7`] on. CJK stays in pairs.
    pub fn has_dictionary_words(self, revision: Revision) -> bool {
        self != Self::Cjk && revision >= Revision::V7
    }
}

fn pair_group(script: Script) -> Option<PairGroup> {
    match script {
        Script::Han | Script::Hiragana | Script::Katakana | Script::Hangul | Script::Bopomofo => Some(PairGroup::Cjk),
        Script::Thai => Some(PairGroup::Thai),
        Script::Lao => Some(PairGroup::Lao),
        Script::Khmer => Some(PairGroup::Khmer),
        Script::Myanmar => Some(PairGroup::Myanmar),
        _ => None,
    }
}

/// The class of `c` as the analyzer of new indexes reads it ([`class_in`]).
pub fn class(c: char) -> CharClass {
    class_in(c, Revision::default())
}

/// The class of `c` as `revision` reads it. ASCII is answered without a table lookup.
pub fn class_in(c: char, revision: Revision) -> CharClass {
    if c.is_ascii() {
        return if c.is_ascii_alphanumeric() {
            CharClass::Word
        } else {
            CharClass::Separator
        };
    }
    let script = c.script();
    if let Some(group) = pair_group(script) {
        // A decimal digit of a script read as pairs (Thai `๒๕๖๗`, Lao, Khmer, Myanmar) is
        // part of a number, read as ASCII digits, from the fourth revision on.
        if revision >= Revision::V4 && ascii_digit(c).is_some() {
            return CharClass::Word;
        }
        return CharClass::Pair(group);
    }
    if matches!(script, Script::Common | Script::Inherited) {
        // The Japanese long-vowel mark, iteration marks and the like belong to the scripts they
        // extend. A character of no script of its own has every script as its extension,
        // Han's included: until the fourth revision that read superscripts and fractions
        // (`m²`, `½`), the micro sign, full-width digits, IPA's length mark and combining
        // marks such as the cedilla as CJK characters, cutting the words they stand in.
        let extension = c.script_extension();
        let names_cjk = revision < Revision::V4 || !(extension.is_common() || extension.is_inherited());
        if names_cjk
            && (extension.contains_script(Script::Katakana)
                || extension.contains_script(Script::Han)
                || extension.contains_script(Script::Hiragana))
            && (c.is_alphanumeric() || is_combining_mark(c))
        {
            return CharClass::Pair(PairGroup::Cjk);
        }
    }
    if revision >= Revision::V4 && (is_combining_mark(c) || is_word_format(c)) {
        return CharClass::Extend;
    }
    if c.is_alphanumeric() || is_combining_mark(c) {
        CharClass::Word
    } else {
        CharClass::Separator
    }
}

/// The format characters (general category Cf) that are no break inside a word (UAX #29's
/// Word_Break Format and ZWJ) and that Unicode marks default-ignorable: the soft hyphen,
/// Arabic's letter mark, Mongolian's vowel separator, the zero-width non-joiner and joiner,
/// the bidirectional marks and controls, the word joiner and invisible operators, the byte
/// order mark, shorthand format controls, musical format controls and tags. Not the
/// zero-width space (U+200B), which UAX #29 reads as a break (Thai and Khmer texts mark
/// word ends with it).
pub fn is_word_format(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{061C}' | '\u{180E}' | '\u{200C}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{FEFF}' | '\u{1BCA0}'..='\u{1BCA3}' | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0000}'..='\u{E0FFF}')
}

/// Whether `c`, a format character that goes on the word it follows, splits a word after
/// `before` instead: the zero-width non-joiner after an Arabic-script letter. Persian, Urdu,
/// Kurdish and Pashto write it between a word and its affixes (`کتاب‌ها`, "books": `کتاب` and
/// the plural's `ها`; `می‌خواهم`, "I want": the present's `می` and the verb), as Lucene's
/// Persian analyzer reads it, so `کتاب` finds `کتاب‌ها`; the analyzer has no stemmer for them.
pub fn splits_after(c: char, before: char) -> bool {
    c == '\u{200C}' && before.script() == Script::Arabic
}

/// The characters texts type as an apostrophe: ASCII's, the right and left single quotation
/// marks, the modifier letter apostrophe (Unicode's choice for Ukrainian's), the grave
/// accent and the acute accent (both typed for it on keyboards without one), as Lucene's
/// Ukrainian analyzer maps them all to one apostrophe.
pub fn is_apostrophe(c: char) -> bool {
    matches!(c, '\'' | '\u{2019}' | '\u{2018}' | '\u{02BC}' | '`' | '\u{00B4}')
}

/// Whether `c`, read between `before` and `after`, is an apostrophe inside a Cyrillic word
/// ([`Revision::V10`] on): Ukrainian and Belarusian write one before a vowel that sounds
/// apart from the consonant it follows (`пам'ять`, "memory"; `сям'я`, "family"), where UAX
/// #29 too keeps a word whole (rule WB6/WB7: a letter, an apostrophe, a letter). Between
/// Latin letters an apostrophe still splits: English's `don't` and French's `l'homme` are
/// read as before.
pub fn joins_cyrillic_word(before: char, c: char, after: char) -> bool {
    is_apostrophe_after_cyrillic(before, c) && is_cyrillic_letter(after)
}

/// Whether `c` is an apostrophe after the Cyrillic letter `before`: inside a word (where
/// [`joins_cyrillic_word`] kept it there), [`Revision::V10`] and later leave it out of the
/// term and count it as no letter.
pub fn is_apostrophe_after_cyrillic(before: char, c: char) -> bool {
    is_apostrophe(c) && is_cyrillic_letter(before)
}

/// A letter of the Cyrillic script.
pub fn is_cyrillic_letter(c: char) -> bool {
    !c.is_ascii() && c.is_alphabetic() && c.script() == Script::Cyrillic
}

/// Unicode's default-ignorable code points (DerivedCoreProperties' Default_Ignorable_Code_Point):
/// characters with no visible form of their own, which NFKC_Casefold (ICU's folding) takes
/// out of a term: [`is_word_format`]'s, the zero-width space, the combining grapheme joiner,
/// Hangul fillers, Khmer's inherent vowels, Mongolian's free variation selectors, variation
/// selectors, and the unassigned code points kept for more.
pub fn is_default_ignorable(c: char) -> bool {
    is_word_format(c)
        || matches!(c,
            '\u{034F}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}' | '\u{180B}'..='\u{180D}' | '\u{180F}'
            | '\u{200B}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FFA0}' | '\u{FFF0}'..='\u{FFF8}')
}

/// The letters a (normalized) word is written in: the script of its first letter.
pub fn letters_of(word: &str) -> Letters {
    for c in word.chars() {
        if c.is_ascii() {
            if c.is_ascii_alphabetic() {
                return Letters::Latin;
            }
            continue;
        }
        return match c.script() {
            Script::Latin => Letters::Latin,
            Script::Cyrillic => Letters::Cyrillic,
            Script::Greek => Letters::Greek,
            Script::Arabic => Letters::Arabic,
            Script::Tamil => Letters::Tamil,
            Script::Devanagari => Letters::Devanagari,
            Script::Armenian => Letters::Armenian,
            Script::Hebrew => Letters::Hebrew,
            Script::Telugu => Letters::Telugu,
            Script::Bengali => Letters::Bengali,
            Script::Common | Script::Inherited => continue,
            _ => Letters::Other,
        };
    }
    Letters::Other
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        assert_eq!(class('a'), CharClass::Word);
        assert_eq!(class('7'), CharClass::Word);
        assert_eq!(class('-'), CharClass::Separator);
        assert_eq!(class('é'), CharClass::Word);
        assert_eq!(class('я'), CharClass::Word);
        // Arabic harakat and Devanagari vowel signs are marks inside words, not separators
        // (from the fourth revision on, part of whatever they follow).
        assert_eq!(class_in('\u{064E}', Revision::V3), CharClass::Word);
        assert_eq!(class_in('\u{093F}', Revision::V3), CharClass::Word);
        assert_eq!(class('\u{064E}'), CharClass::Extend);
        assert_eq!(class('東'), CharClass::Pair(PairGroup::Cjk));
        assert_eq!(class('の'), CharClass::Pair(PairGroup::Cjk));
        assert_eq!(class('ー'), CharClass::Pair(PairGroup::Cjk));
        assert_eq!(class('한'), CharClass::Pair(PairGroup::Cjk));
        assert_eq!(class('ก'), CharClass::Pair(PairGroup::Thai));
        assert_eq!(class('。'), CharClass::Separator);
        assert_eq!(class('、'), CharClass::Separator);
        assert_eq!(letters_of("3d"), Letters::Latin);
        assert_eq!(letters_of("слово"), Letters::Cyrillic);
        assert_eq!(letters_of("كتاب"), Letters::Arabic);
        assert_eq!(letters_of("किताब"), Letters::Devanagari);
        assert_eq!(letters_of("գիրք"), Letters::Armenian);
        assert_eq!(letters_of("בוך"), Letters::Hebrew);
        assert_eq!(letters_of("123"), Letters::Other);
    }

    /// Characters of no script of their own, marks and format characters, as the fourth
    /// revision reads them and as the third did.
    #[test]
    fn marks_and_characters_of_no_script() {
        let v3 = |c| class_in(c, Revision::V3);
        let v4 = |c| class_in(c, Revision::V4);
        // Superscripts, subscripts, fractions, the micro sign, full-width digits and IPA's
        // length mark: the third revision read them as CJK, the fourth in words.
        for c in ['²', '₂', '½', 'µ', '２', 'ː', 'ʻ', '①'] {
            assert_eq!(v3(c), CharClass::Pair(PairGroup::Cjk), "{c}");
            assert_eq!(v4(c), CharClass::Word, "{c}");
        }
        // Marks and format characters go on what they follow; a combining cedilla was CJK too.
        assert_eq!(v3('\u{0327}'), CharClass::Pair(PairGroup::Cjk));
        for c in [
            '\u{0327}',
            '\u{0301}',
            '\u{093F}',
            '\u{064E}',
            '\u{00AD}',
            '\u{200C}',
            '\u{200D}',
            '\u{2060}',
            '\u{FEFF}',
            '\u{FE0F}',
            '\u{E0100}',
        ] {
            assert_eq!(v4(c), CharClass::Extend, "{:04X}", c as u32);
        }
        assert_eq!(v3('\u{00AD}'), CharClass::Separator);
        assert_eq!(v3('\u{093F}'), CharClass::Word);
        // The zero-width space is a break in both; CJK's own marks stay CJK.
        assert_eq!(v4('\u{200B}'), CharClass::Separator);
        assert_eq!(v4('ー'), CharClass::Pair(PairGroup::Cjk));
        assert_eq!(v4('々'), CharClass::Pair(PairGroup::Cjk));
        assert_eq!(v4('\u{3099}'), CharClass::Pair(PairGroup::Cjk));
        assert_eq!(v4('\u{FF9E}'), CharClass::Pair(PairGroup::Cjk));
        assert_eq!(v4('。'), CharClass::Separator);
        // Thai, Lao, Khmer and Myanmar digits are digits of a word, not characters of pairs;
        // Han's numerals stay ideographs.
        for c in ['๒', '໕', '៣', '၇'] {
            assert!(matches!(v3(c), CharClass::Pair(_)), "{c}");
            assert_eq!(v4(c), CharClass::Word, "{c}");
        }
        assert_eq!(v4('〇'), CharClass::Pair(PairGroup::Cjk));
        assert_eq!(v4('三'), CharClass::Pair(PairGroup::Cjk));
        // Every word-joining format character is default-ignorable; the zero-width space is
        // ignorable but no word's part.
        for code in (0..0x11_0000).filter_map(char::from_u32) {
            assert!(
                !is_word_format(code) || is_default_ignorable(code),
                "{:04X}",
                code as u32
            );
        }
        assert!(is_default_ignorable('\u{200B}') && !is_word_format('\u{200B}'));
        assert!(!is_default_ignorable('a') && !is_default_ignorable('\u{0301}'));
    }

    #[test]
    fn an_apostrophe_joins_only_cyrillic_letters() {
        for apostrophe in ['\'', '’', '‘', 'ʼ', '`', '´'] {
            assert!(joins_cyrillic_word('м', apostrophe, 'я'), "{apostrophe}");
            assert!(!joins_cyrillic_word('n', apostrophe, 't'), "{apostrophe}");
            assert!(!joins_cyrillic_word('м', apostrophe, 't'), "{apostrophe}");
            assert!(!joins_cyrillic_word('м', apostrophe, ' '), "{apostrophe}");
            assert!(!joins_cyrillic_word('7', apostrophe, 'я'), "{apostrophe}");
        }
        assert!(!joins_cyrillic_word('м', '"', 'я'));
        assert!(!joins_cyrillic_word('м', '-', 'я'));
        // A Cyrillic mark is no letter.
        assert!(!joins_cyrillic_word('\u{0483}', '\'', 'я'));
    }
}
