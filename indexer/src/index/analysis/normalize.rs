//! The normal form of a word before stop words and stemming: Unicode NFKC (full-width
//! letters, ligatures and compatibility forms to their plain forms), lower case, and for
//! Arabic script Lucene's `ArabicNormalizer` (alef forms to bare alef, alef maksura to yeh,
//! teh marbuta to heh, tatweel and harakat removed). After stemming, [`fold_marks`] takes
//! the accents off Latin and Greek letters, so `cafe` finds `café`.

use unicode_normalization::UnicodeNormalization;

/// NFKC, lower case, Arabic normalization; `out` is cleared first.
pub fn normalize_word(word: &str, out: &mut String) {
    out.clear();
    if word.is_ascii() {
        out.push_str(word);
        out.make_ascii_lowercase();
        return;
    }
    for c in word.nfkc().flat_map(char::to_lowercase) {
        match c {
            // Tatweel and the Arabic diacritics (harakat, superscript alef).
            '\u{0640}' | '\u{064B}'..='\u{065F}' | '\u{0670}' => {}
            '\u{0622}' | '\u{0623}' | '\u{0625}' | '\u{0671}' => out.push('\u{0627}'),
            '\u{0649}' => out.push('\u{064A}'),
            '\u{0629}' => out.push('\u{0647}'),
            c => out.push(c),
        }
    }
}

/// `word` with the accents of its Latin and Greek letters removed (NFD, combining marks of
/// those letters dropped) and the few Latin letters that are not a base plus a mark spelled
/// out (ß, æ, œ, ø, ł, đ, þ). Other scripts are left as they are: their marks are letters' parts.
pub fn fold_marks(word: &str) -> Option<String> {
    if word.is_ascii() || !word.chars().any(foldable) {
        return None;
    }
    let mut out = String::with_capacity(word.len());
    let mut base_foldable = false;
    for c in word.nfd() {
        if unicode_normalization::char::is_combining_mark(c) {
            if !base_foldable {
                out.push(c);
            }
            continue;
        }
        base_foldable = is_latin_or_greek(c);
        match c {
            'ß' => out.push_str("ss"),
            'æ' => out.push_str("ae"),
            'œ' => out.push_str("oe"),
            'ø' => out.push('o'),
            'ł' => out.push('l'),
            'đ' => out.push('d'),
            'þ' => out.push_str("th"),
            'ς' => out.push('σ'),
            c => out.push(c),
        }
    }
    Some(out.nfc().collect())
}

fn is_latin_or_greek(c: char) -> bool {
    matches!(c, 'a'..='z' | 'A'..='Z' | '\u{00C0}'..='\u{024F}' | '\u{1E00}'..='\u{1EFF}' | '\u{0370}'..='\u{03FF}' | '\u{1F00}'..='\u{1FFF}')
}

fn foldable(c: char) -> bool {
    !c.is_ascii() && is_latin_or_greek(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normal(word: &str) -> String {
        let mut out = String::new();
        normalize_word(word, &mut out);
        out
    }

    #[test]
    fn normal_forms() {
        assert_eq!(normal("HeLLo"), "hello");
        assert_eq!(normal("Ｆｕｌｌｗｉｄｔｈ"), "fullwidth");
        assert_eq!(normal("ﬁne"), "fine");
        assert_eq!(normal("ÄRGER"), "ärger");
        // Alef with hamza, tatweel, a fatha and teh marbuta.
        assert_eq!(normal("أمـــيرَة"), "اميره");
        assert_eq!(normal("إلى"), "الي");
    }

    #[test]
    fn folding() {
        assert_eq!(fold_marks("café").as_deref(), Some("cafe"));
        assert_eq!(fold_marks("straße").as_deref(), Some("strasse"));
        assert_eq!(fold_marks("häuser").as_deref(), Some("hauser"));
        assert_eq!(fold_marks("άνθρωπος").as_deref(), Some("ανθρωποσ"));
        assert_eq!(fold_marks("plain"), None);
        assert_eq!(fold_marks("слово"), None);
        // Devanagari's vowel signs stay.
        assert_eq!(fold_marks("हिंदी"), None);
    }
}
