//! What LaTeX's text commands typeset: letters (`\o` ø, `\ss` ß), symbols (`\S` §), the TeX
//! world's logos (`\LaTeX`, `\BibTeX`, `\MF`), and letters under accents (`\'e` é, `\v{c}` č,
//! `\H{o}` ő), for [`super::latex`] and the BibTeX fields it reads.

/// A command's text, and whether the spaces after it are TeX's (taken with the command, as
/// after a letter: `Bj\o rn` is one word) or the writer's (kept, as after a logo).
pub(super) fn text_command(name: &str) -> Option<(&'static str, bool)> {
    const LETTERS: &[(&str, &str)] = &[
        ("o", "ø"),
        ("O", "Ø"),
        ("ae", "æ"),
        ("AE", "Æ"),
        ("oe", "œ"),
        ("OE", "Œ"),
        ("aa", "å"),
        ("AA", "Å"),
        ("l", "ł"),
        ("L", "Ł"),
        ("ss", "ß"),
        ("SS", "SS"),
        ("i", "ı"),
        ("j", "ȷ"),
        ("dh", "ð"),
        ("DH", "Ð"),
        ("th", "þ"),
        ("TH", "Þ"),
    ];
    const SYMBOLS: &[(&str, &str)] = &[
        ("S", "§"),
        ("P", "¶"),
        ("copyright", "©"),
        ("textcopyright", "©"),
        ("textregistered", "®"),
        ("texttrademark", "™"),
        ("pounds", "£"),
        ("textsterling", "£"),
        ("euro", "€"),
        ("texteuro", "€"),
        ("dag", "†"),
        ("ddag", "‡"),
        ("textdegree", "°"),
        ("textendash", "–"),
        ("textemdash", "—"),
        ("textbullet", "•"),
        ("ldots", "…"),
        ("dots", "…"),
        ("textellipsis", "…"),
        ("textasciitilde", "~"),
        ("textbackslash", "\\"),
        ("textbar", "|"),
        ("textless", "<"),
        ("textgreater", ">"),
        ("textunderscore", "_"),
        ("slash", "/"),
        ("thinspace", " "),
        ("enspace", " "),
        ("quad", " "),
        ("qquad", " "),
        ("LaTeX", "LaTeX"),
        ("LaTeXe", "LaTeX2e"),
        ("TeX", "TeX"),
        ("BibTeX", "BibTeX"),
        ("XeTeX", "XeTeX"),
        ("XeLaTeX", "XeLaTeX"),
        ("LuaTeX", "LuaTeX"),
        ("LuaLaTeX", "LuaLaTeX"),
        ("pdfTeX", "pdfTeX"),
        ("pdfLaTeX", "pdfLaTeX"),
        ("ConTeXt", "ConTeXt"),
        ("eTeX", "e-TeX"),
        ("SliTeX", "SliTeX"),
        ("AmSTeX", "AmS-TeX"),
        ("AmS", "AMS"),
        ("MF", "METAFONT"),
        ("MP", "MetaPost"),
        ("METAFONT", "METAFONT"),
    ];
    if let Some((_, letter)) = LETTERS.iter().find(|(n, _)| *n == name) {
        return Some((letter, true));
    }
    SYMBOLS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, symbol)| (*symbol, false))
}

/// A command of two or more capitals that LaTeX does not define (`\VAX`, `\CTAN`, `\PDF`):
/// a logo or abbreviation a document's own macro typesets, read as its name. The size
/// command `\LARGE` is no text.
pub(super) fn reads_as_its_name(name: &str) -> bool {
    name.len() >= 2 && name.bytes().all(|b| b.is_ascii_uppercase()) && name != "LARGE"
}

/// The accents written with a letter's name: `\c{c}` cedilla, `\v{c}` caron, `\u{a}` breve,
/// `\H{o}` double acute, `\k{a}` ogonek, `\r{a}` ring.
pub(super) fn is_letter_accent(name: &str) -> bool {
    matches!(name, "c" | "v" | "u" | "H" | "k" | "r")
}

/// `letter` with `accent` (`'` acute, `` ` `` grave, `^` circumflex, `"` diaeresis, `~` tilde,
/// `=` macron, `.` dot above, and the lettered accents of [`is_letter_accent`]), where Latin-1
/// and Latin Extended-A have it; the plain letter otherwise.
pub(super) fn accented(letter: char, accent: char) -> char {
    const TABLE: &[(char, &str, &str)] = &[
        ('\'', "aeiouyAEIOUYcnszrlgCNSZRLG", "áéíóúýÁÉÍÓÚÝćńśźŕĺǵĆŃŚŹŔĹǴ"),
        ('`', "aeiouAEIOU", "àèìòùÀÈÌÒÙ"),
        ('^', "aeiouAEIOUcghjswyCGHJSWY", "âêîôûÂÊÎÔÛĉĝĥĵŝŵŷĈĜĤĴŜŴŶ"),
        ('"', "aeiouyAEIOUY", "äëïöüÿÄËÏÖÜŸ"),
        ('~', "anoiuANOIU", "ãñõĩũÃÑÕĨŨ"),
        ('=', "aeiouAEIOU", "āēīōūĀĒĪŌŪ"),
        ('.', "cegzIECGZ", "ċėġżİĖĊĠŻ"),
        ('c', "cstgklnrCSTGKLNR", "çşţģķļņŗÇŞŢĢĶĻŅŖ"),
        ('v', "cdenrstzCDENRSTZ", "čďěňřšťžČĎĚŇŘŠŤŽ"),
        ('u', "agiuAGIU", "ăğĭŭĂĞĬŬ"),
        ('H', "ouOU", "őűŐŰ"),
        ('k', "aeiuAEIU", "ąęįųĄĘĮŲ"),
        ('r', "auAU", "åůÅŮ"),
    ];
    TABLE
        .iter()
        .find(|(a, _, _)| *a == accent)
        .and_then(|(_, plain, marked)| {
            plain
                .chars()
                .position(|c| c == letter)
                .and_then(|p| marked.chars().nth(p))
        })
        .unwrap_or(letter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_accent_table_row_pairs_its_letters() {
        for accent in ['\'', '`', '^', '"', '~', '=', '.', 'c', 'v', 'u', 'H', 'k', 'r'] {
            for letter in ('a'..='z').chain('A'..='Z') {
                let marked = accented(letter, accent);
                // A marked letter decomposes to the plain letter and a combining mark.
                if marked != letter {
                    use unicode_normalization::UnicodeNormalization;
                    let base = marked.to_string().nfd().next().unwrap();
                    assert_eq!(base, letter, "{accent}{letter} -> {marked}");
                }
            }
        }
        assert_eq!(accented('r', 'v'), 'ř');
        assert_eq!(accented('q', 'v'), 'q');
        assert_eq!(text_command("o"), Some(("ø", true)));
        assert_eq!(text_command("MF"), Some(("METAFONT", false)));
        assert!(reads_as_its_name("VAX") && !reads_as_its_name("LARGE") && !reads_as_its_name("S"));
    }
}
