//! The normal form of a word before stop words and stemming: Unicode NFKC (full-width
//! letters, ligatures and compatibility forms to their plain forms), lower case, and for
//! Arabic script Lucene's `ArabicNormalizer` (alef forms to bare alef, alef maksura to yeh,
//! tatweel and harakat removed; teh marbuta to heh, which [`Revision::V2`] and later do after
//! stemming, [`after_stemming`]). From [`Revision::V2`] on it also reads Persian's yeh and keheh as
//! Arabic's yeh and kaf (texts typed on either keyboard), and the decimal digits of every
//! script as ASCII digits (`٢٠٢٤` and `۲۰۲۴` are `2024`, as Lucene's `DecimalDigitFilter`
//! reads them). From [`Revision::V4`] on, default-ignorable characters (a soft hyphen, a
//! zero-width joiner, a variation selector) are left out first, as NFKC_Casefold leaves them
//! out. From [`Revision::V5`] on, the Quran's annotation marks go with the harakat. From
//! [`Revision::V10`] on, an apostrophe inside a Cyrillic word (`пам'ять`) and a stress mark on
//! a Cyrillic letter (`Москва́`) are left out and `ґ` is read as `г`, as Lucene's Ukrainian
//! analyzer reads them. After
//! stemming, [`fold_marks`] takes the accents off Latin and Greek letters, so `cafe` finds
//! `café`, and from [`Revision::V5`] on the points off Hebrew's, so `ספר` finds `סֵפֶר`.

use unicode_normalization::char::is_combining_mark;
use unicode_normalization::UnicodeNormalization;

use super::script::{is_apostrophe_after_cyrillic, is_cyrillic_letter, is_default_ignorable};
use super::Revision;

/// NFKC, lower case, Arabic normalization (teh marbuta to heh in [`Revision::V1`] only;
/// Persian letters and decimal digits from [`Revision::V2`] on; default-ignorable characters,
/// a soft hyphen or a zero-width joiner, left out first from [`Revision::V4`] on; an
/// apostrophe after a Cyrillic letter and a stress mark on one left out, `ґ` read as `г`, from
/// [`Revision::V10`] on); `out` is cleared first.
pub fn normalize_word(word: &str, out: &mut String, revision: Revision) {
    out.clear();
    if word.is_ascii() {
        out.push_str(word);
        out.make_ascii_lowercase();
        return;
    }
    // The last character before `c` that is no mark.
    let mut letter_before = ' ';
    let visible = word.chars().filter(move |&c| {
        if revision < Revision::V4 {
            return true;
        }
        let apostrophe_in_cyrillic = revision >= Revision::V10 && is_apostrophe_after_cyrillic(letter_before, c);
        if !is_combining_mark(c) {
            letter_before = c;
        }
        !(is_default_ignorable(c) || apostrophe_in_cyrillic)
    });
    for c in visible.nfkc().flat_map(char::to_lowercase) {
        match c {
            // A stress mark on a Cyrillic vowel (`Москва́`; NFKC has composed the letters
            // whose accent is part of them, Macedonian's `ѓ` and `ќ`), and Ukrainian's `ґ`
            // read as `г`, as texts spell it either way.
            '\u{0301}' if revision >= Revision::V10 && out.chars().next_back().is_some_and(is_cyrillic_letter) => {}
            'ґ' if revision >= Revision::V10 => out.push('г'),
            // Tatweel and the Arabic diacritics (harakat, superscript alef).
            '\u{0640}' | '\u{064B}'..='\u{065F}' | '\u{0670}' => {}
            c if revision >= Revision::V5 && is_quranic_mark(c) => {}
            '\u{0622}' | '\u{0623}' | '\u{0625}' | '\u{0671}' => out.push('\u{0627}'),
            '\u{0649}' => out.push('\u{064A}'),
            '\u{0629}' if revision == Revision::V1 => out.push('\u{0647}'),
            // Farsi yeh and keheh, as Arabic's yeh and kaf.
            '\u{06CC}' if revision >= Revision::V2 => out.push('\u{064A}'),
            '\u{06A9}' if revision >= Revision::V2 => out.push('\u{0643}'),
            c if revision >= Revision::V2 && !c.is_ascii() => out.push(ascii_digit(c).unwrap_or(c)),
            c => out.push(c),
        }
    }
}

/// The Quran's annotation marks (Unicode's Arabic small high and low signs, U+06D6-U+06ED,
/// those that are marks): Uthmani spellings carry one on most words, as pointed text does
/// harakat.
fn is_quranic_mark(c: char) -> bool {
    matches!(c, '\u{06D6}'..='\u{06DC}' | '\u{06DF}'..='\u{06E4}' | '\u{06E7}' | '\u{06E8}' | '\u{06EA}'..='\u{06ED}')
}

/// Hebrew's points (vowels, dagesh, shin and sin dots) and cantillation marks: optional
/// marks, as accents are, left out of most text (U+0591-U+05C7, those that are marks).
pub(super) fn is_hebrew_point(c: char) -> bool {
    matches!(
        c,
        '\u{0591}'..='\u{05BD}' | '\u{05BF}' | '\u{05C1}' | '\u{05C2}' | '\u{05C4}' | '\u{05C5}' | '\u{05C7}'
    )
}

/// The first digit, zero, of each run of ten decimal digits in the Basic Multilingual Plane
/// beyond ASCII's (Unicode's `Nd` characters; full-width digits are NFKC's already).
const DIGIT_ZEROS: [u32; 35] = [
    0x0660, 0x06F0, 0x07C0, 0x0966, 0x09E6, 0x0A66, 0x0AE6, 0x0B66, 0x0BE6, 0x0C66, 0x0CE6, 0x0D66, 0x0DE6, 0x0E50,
    0x0ED0, 0x0F20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90, 0x1B50, 0x1BB0, 0x1C40, 0x1C50,
    0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0,
];

/// `c` as an ASCII digit, when it is a decimal digit of another script.
pub(super) fn ascii_digit(c: char) -> Option<char> {
    let code = c as u32;
    // The last run starting at or before `c` (the runs are in order and apart).
    let zero = DIGIT_ZEROS[..DIGIT_ZEROS.partition_point(|&zero| zero <= code)].last()?;
    (code - zero < 10).then(|| char::from(b'0' + (code - zero) as u8))
}

/// What [`Revision::V2`] and later normalize once a word is stemmed: teh marbuta to heh. The Snowball
/// Arabic stemmer takes a teh marbuta off as a suffix but not a heh after the article, so
/// normalized first `المدينة` ("the city") stemmed to `مدينه` and `مدينة` to `مدين`.
pub fn after_stemming(term: String, revision: Revision) -> String {
    match revision >= Revision::V2 && term.contains('\u{0629}') {
        true => term.replace('\u{0629}', "\u{0647}"),
        false => term,
    }
}

/// `word` with the accents of its Latin and Greek letters removed (NFD, combining marks of
/// those letters dropped) and the few Latin letters that are not a base plus a mark spelled
/// out (ß, æ, œ, ø, ł, đ, þ; in [`Revision::V2`] Turkish's dotless ı too). Other scripts are
/// left as they are: their marks are letters' parts. [`Revision::V2`] also drops a mark after
/// an ASCII letter: Turkish `İstanbul` lower-cases to `i̇stanbul`, an `i` and a combining dot.
/// [`Revision::V5`] also drops Hebrew's points ([`is_hebrew_point`]; [`normalize_word`]'s
/// NFKC has made a pointed presentation form such as `שׁ` a letter and a point).
pub fn fold_marks(word: &str, revision: Revision) -> Option<String> {
    let mark_after_ascii = || {
        let mut chars = word.chars().peekable();
        std::iter::from_fn(|| Some((chars.next()?, chars.peek().copied()))).any(|(c, next)| {
            c.is_ascii_alphabetic() && next.is_some_and(unicode_normalization::char::is_combining_mark)
        })
    };
    // `ı` is in Latin Extended-A: foldable in either revision.
    if word.is_ascii() {
        return None;
    }
    let hebrew = revision >= Revision::V5 && word.chars().any(is_hebrew_point);
    if !(hebrew || word.chars().any(foldable) || (revision >= Revision::V2 && mark_after_ascii())) {
        return None;
    }
    let mut out = String::with_capacity(word.len());
    let mut base_foldable = false;
    for c in word.nfd() {
        if unicode_normalization::char::is_combining_mark(c) {
            let folded = base_foldable || (hebrew && is_hebrew_point(c));
            if !folded {
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
            'ı' if revision >= Revision::V2 => out.push('i'),
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
        normal_as(word, Revision::V1)
    }

    fn normal_as(word: &str, revision: Revision) -> String {
        let mut out = String::new();
        normalize_word(word, &mut out, revision);
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
        // V2 keeps teh marbuta for the stemmer and makes it heh after.
        let v2 = |word: &str| normal_as(word, Revision::V2);
        assert_eq!(v2("أمـــيرَة"), "اميرة");
        assert_eq!(after_stemming(v2("أمـــيرَة"), Revision::V2), "اميره");
        // V2 reads Persian yeh and keheh as Arabic's, and every script's decimal digits as ASCII.
        assert_eq!(v2("کتابی"), v2("كتابي"));
        assert_eq!(v2("٢٠٢٤"), "2024");
        assert_eq!(v2("۱۴۰۳"), "1403");
        assert_eq!(v2("२०२४"), "2024");
        assert_eq!(v2("๒๕๖๗"), "2567");
        assert_eq!(v2("１２"), "12");
        assert_eq!(normal("٢٠٢٤"), "٢٠٢٤");
        // Every run of ten is a run of Unicode's decimal digits.
        for zero in DIGIT_ZEROS {
            for (i, code) in (zero..zero + 10).enumerate() {
                let c = char::from_u32(code).unwrap();
                assert!(c.is_numeric(), "{code:X}");
                assert_eq!(ascii_digit(c), Some(char::from(b'0' + i as u8)), "{code:X}");
            }
        }
        assert_eq!(ascii_digit('a'), None);
        assert_eq!(ascii_digit('\u{066A}'), None);
        assert_eq!(ascii_digit('\u{FFFF}'), None);
    }

    #[test]
    fn folding() {
        assert_eq!(fold_marks("café", Revision::V1).as_deref(), Some("cafe"));
        assert_eq!(fold_marks("straße", Revision::V1).as_deref(), Some("strasse"));
        assert_eq!(fold_marks("häuser", Revision::V1).as_deref(), Some("hauser"));
        assert_eq!(fold_marks("άνθρωπος", Revision::V1).as_deref(), Some("ανθρωποσ"));
        assert_eq!(fold_marks("plain", Revision::V1), None);
        assert_eq!(fold_marks("слово", Revision::V1), None);
        // Devanagari's vowel signs stay.
        assert_eq!(fold_marks("हिंदी", Revision::V1), None);
        assert_eq!(fold_marks("हिंदी", Revision::V2), None);
        // Turkish: İ lower-cases to an i and a combining dot, which V2 drops, and its dotless ı
        // folds to i (V1 kept both).
        let istanbul: String = "İstanbul".to_lowercase();
        assert_eq!(fold_marks(&istanbul, Revision::V2).as_deref(), Some("istanbul"));
        assert_eq!(fold_marks(&istanbul, Revision::V1), None);
        assert_eq!(fold_marks("kalabalık", Revision::V2).as_deref(), Some("kalabalik"));
        assert_eq!(fold_marks("kalabalık", Revision::V1).as_deref(), Some("kalabalık"));
        assert_eq!(fold_marks("şehirdeki", Revision::V2).as_deref(), Some("sehirdeki"));
    }

    /// Apostrophes inside Cyrillic words, stress marks on Cyrillic letters and Ukrainian's
    /// `ґ`, from the tenth revision on; the ninth kept them.
    #[test]
    fn cyrillic_apostrophes_and_stress_marks() {
        let v10 = |word: &str| normal_as(word, Revision::V10);
        // "memory" typed with each apostrophe texts use.
        for word in ["Пам'ять", "Пам’ять", "Пам‘ять", "Памʼять", "Пам`ять", "Пам´ять"]
        {
            assert_eq!(v10(word), "память", "{word}");
        }
        assert_eq!(normal_as("Памʼять", Revision::V9), "памʼять");
        // Stress marks, as dictionaries and Wikipedia's first lines mark them; one on `ї`.
        assert_eq!(v10("Москва\u{301}"), "москва");
        assert_eq!(v10("Ки\u{301}їв"), "київ");
        assert_eq!(v10("ї\u{301}жа"), "їжа");
        assert_eq!(normal_as("Москва\u{301}", Revision::V9), "москва\u{301}");
        // Macedonian's `ѓ` and `ќ`, decomposed, are letters of their own still.
        assert_eq!(v10("г\u{301}ердан"), "ѓердан");
        assert_eq!(v10("к\u{301}ерка"), "ќерка");
        // `ґ` as `г`.
        assert_eq!(v10("Ґанок"), "ганок");
        // Latin words keep what they had: an acute is an accent there (folded after stemming),
        // and the modifier apostrophe of Uzbek or Hawaiian is a letter.
        assert_eq!(v10("cafe\u{301}"), "café");
        assert_eq!(v10("maʼno"), "maʼno");
    }

    /// Hebrew's points and cantillation, and the Quran's annotation marks, go from the fifth
    /// revision on; the fourth kept them.
    #[test]
    fn hebrew_points_and_quranic_marks() {
        let folded = |word: &str, revision| {
            let normal = normal_as(word, revision);
            fold_marks(&normal, revision).unwrap_or(normal)
        };
        // Vowel points and a dagesh; cantillation (Genesis 1:1's first word); shin's dot, as a
        // mark and in a presentation form.
        assert_eq!(folded("הַסֵּפֶר", Revision::V5), "הספר");
        assert_eq!(folded("בְּרֵאשִׁ֖ית", Revision::V5), "בראשית");
        assert_eq!(folded("שָׁלוֹם", Revision::V5), "שלום");
        assert_eq!(folded("\u{FB2A}לום", Revision::V5), "שלום");
        assert_eq!(folded("הַסֵּפֶר", Revision::V4), "הַסֵּפֶר");
        // Hebrew's maqaf and geresh are no points.
        assert_eq!(folded("צ׳יפס", Revision::V5), "צ׳יפס");
        // The Uthmani spelling of "the prayer", its small marks and dagger alef left out.
        assert_eq!(folded("ٱلصَّلَوٰةَ", Revision::V5), "الصلوة");
        assert_eq!(folded("لَا رَيْبَۛ فِيهِۛ", Revision::V5), "لا ريب فيه");
        assert_eq!(folded("رَيْبَۛ", Revision::V4), "ريبۛ");
        // Latin and Greek fold as before; other scripts' marks stay.
        assert_eq!(folded("Café", Revision::V5), "cafe");
        assert_eq!(folded("हिंदी", Revision::V5), "हिंदी");
    }
}
