//! Words of the scripts written without spaces that ICU cuts by dictionary: Thai, Lao, Khmer
//! and Myanmar ([`super::Revision::V7`] on). Their runs were read as overlapping pairs of
//! code points, and a pair there is often a consonant and a vowel sign or a tone mark, found
//! inside many unrelated words (`ตา`, "eye", is in `ตาม`, "follow", and `ตาราง`, "table").
//! ICU's word segmenter cuts each run by its language's word list (the UAX #29 rules with
//! ICU's dictionaries, as Lucene's Thai tokenizer and Elasticsearch's `icu_tokenizer` cut
//! Thai), so a term is a word and a query finds the word, not its syllables. ICU4X's LSTM
//! segmenter, the other way it offers, ranked worse on XQuAD's Thai (bench/RESULTS.md).

use std::ops::Range;

use icu_segmenter::options::WordBreakInvariantOptions;
use icu_segmenter::WordSegmenter;

/// The byte ranges of the words of `text[run]`, a run of one of those scripts, in order:
/// each segment ICU's dictionary segmenter cuts the run into that holds a letter (a lone
/// mark or sign is no word). A run of letters the dictionary knows no word in is cut into
/// short pieces, never left whole.
pub fn dictionary_words(text: &str, run: Range<usize>, mut emit: impl FnMut(Range<usize>)) {
    // Compiled data: making the segmenter allocates nothing.
    let segmenter = WordSegmenter::new_dictionary(WordBreakInvariantOptions::default());
    let part = &text[run.clone()];
    let mut start = 0;
    for end in segmenter.segment_str(part) {
        if end > start && part[start..end].chars().any(char::is_alphabetic) {
            emit(run.start + start..run.start + end);
        }
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        dictionary_words(text, 0..text.len(), |range| out.push(&text[range]));
        out
    }

    #[test]
    fn runs_are_cut_into_their_words() {
        // Thai: "Thai is the official language of Thailand"; a timetable.
        assert_eq!(words("ภาษาไทยเป็นภาษาราชการ"), ["ภาษา", "ไทย", "เป็น", "ภาษา", "ราชการ"]);
        assert_eq!(words("ตารางเวลารถไฟ"), ["ตาราง", "เวลา", "รถไฟ"]);
        // Lao, Khmer and Myanmar by their own dictionaries.
        assert_eq!(words("ພາສາລາວເປັນພາສາທາງການ"), ["ພາສາ", "ລາວ", "ເປັນ", "ພາສາ", "ທາງການ"]);
        assert_eq!(words("ភាសាខ្មែរជាភាសា"), ["ភាសាខ្មែរ", "ជា", "ភាសា"]);
        assert_eq!(words("မြန်မာဘာသာစကားသည်"), ["မြန်မာဘာသာ", "စကား", "သည်"]);
        // Ranges are the text's: a run inside a longer text.
        let text = "Bangkok กรุงเทพ city";
        let mut ranges = Vec::new();
        dictionary_words(text, 8..8 + "กรุงเทพ".len(), |range| ranges.push(range));
        assert_eq!(ranges.iter().map(|r| &text[r.clone()]).collect::<String>(), "กรุงเทพ");
        assert!(ranges.windows(2).all(|w| w[0].end <= w[1].start));
        // Letters that make no word the dictionary knows are cut short, not kept whole.
        let unknown = "กขคงจฉชซฌญฎฏฐฑฒณดตถทธนบปผฝพฟภมยรลวศษสหฬอฮ".repeat(3);
        let pieces = words(&unknown);
        assert!(
            pieces.len() > 10 && pieces.iter().all(|w| w.chars().count() <= 8),
            "{pieces:?}"
        );
        assert_eq!(pieces.concat(), unknown);
        // A lone mark is no word.
        assert!(words("\u{0E48}").is_empty());
    }
}
