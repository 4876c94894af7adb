//! What a character is to the keyword analyzer: part of a word, part of a run of a script
//! written without spaces (read as character pairs, as Lucene's and Elasticsearch's `cjk`
//! analyzers do), or a separator.

use unicode_script::{Script, UnicodeScript};

use super::language::Letters;

/// Scripts written without spaces between words; runs of one group are cut into pairs.
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
    Separator,
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

/// The class of `c`. ASCII is answered without a table lookup.
pub fn class(c: char) -> CharClass {
    if c.is_ascii() {
        return if c.is_ascii_alphanumeric() {
            CharClass::Word
        } else {
            CharClass::Separator
        };
    }
    let script = c.script();
    if let Some(group) = pair_group(script) {
        return CharClass::Pair(group);
    }
    if matches!(script, Script::Common | Script::Inherited) {
        // The Japanese long-vowel mark, iteration marks and the like belong to the scripts they extend.
        let extension = c.script_extension();
        if (extension.contains_script(Script::Katakana)
            || extension.contains_script(Script::Han)
            || extension.contains_script(Script::Hiragana))
            && (c.is_alphanumeric() || unicode_normalization::char::is_combining_mark(c))
        {
            return CharClass::Pair(PairGroup::Cjk);
        }
    }
    if c.is_alphanumeric() || unicode_normalization::char::is_combining_mark(c) {
        CharClass::Word
    } else {
        CharClass::Separator
    }
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
        // Arabic harakat and Devanagari vowel signs are marks inside words, not separators.
        assert_eq!(class('\u{064E}'), CharClass::Word);
        assert_eq!(class('\u{093F}'), CharClass::Word);
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
}
