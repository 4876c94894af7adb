use std::sync::OnceLock;

use hashbrown::HashMap;

#[cfg(test)]
use super::LangProfile;
use super::LangProfileList;
#[cfg(test)]
use super::Trigram;
#[cfg(test)]
use super::utils::{TrigramsWithPositions, get_trigrams_with_positions};
use super::utils::{pack, ranked_trigrams};
use super::{ARABIC_LANGS, CYRILLIC_LANGS, DEVANAGARI_LANGS, HEBREW_LANGS, LATIN_LANGS};
use super::{MAX_TOTAL_DISTANCE, MAX_TRIGRAM_DISTANCE};
use crate::Lang;
use crate::core::{FilterList, Info, InternalQuery, Text, calculate_confidence};
use crate::scripts::grouping::MultiLangScript;

#[derive(Debug)]
pub struct RawOutcome {
    pub trigrams_count: usize,
    #[allow(dead_code)]
    pub raw_distances: Vec<(Lang, u32)>,
    pub scores: Vec<(Lang, f64)>,
}

#[inline]
pub fn detect(iquery: &InternalQuery) -> Option<Info> {
    let raw_outcome = raw_detect(iquery);
    let RawOutcome {
        trigrams_count,
        scores,
        ..
    } = raw_outcome;

    let mut raw_scores_iter = scores.into_iter();

    let opt_lang_score1 = raw_scores_iter.next();
    let opt_lang_score2 = raw_scores_iter.next();

    // TODO: Logic is duplicated in alphabets. Consider refactoring
    opt_lang_score1.map(|(lang1, score1)| {
        let script = iquery.multi_lang_script.to_script();
        let confidence = if let Some((_, score2)) = opt_lang_score2 {
            calculate_confidence(score1, score2, trigrams_count)
        } else {
            1.0
        };
        Info::new(script, lang1, confidence)
    })
}

#[inline]
pub fn raw_detect(iquery: &InternalQuery) -> RawOutcome {
    let lang_profile_list = script_to_lang_profile_list(iquery.multi_lang_script);
    calculate_scores_in_profiles(&iquery.text, iquery.filter_list, lang_profile_list)
}

fn script_to_lang_profile_list(script: MultiLangScript) -> LangProfileList {
    use MultiLangScript as MLS;
    match script {
        MLS::Latin => LATIN_LANGS,
        MLS::Cyrillic => CYRILLIC_LANGS,
        MLS::Arabic => ARABIC_LANGS,
        MLS::Devanagari => DEVANAGARI_LANGS,
        MLS::Hebrew => HEBREW_LANGS,
    }
}

#[inline]
fn calculate_scores_in_profiles(
    text: &Text,
    filter_list: &FilterList,
    lang_profile_list: LangProfileList,
) -> RawOutcome {
    let ranked = ranked_trigrams(&text.lowercase());
    let lang_distances = profile_distances(&ranked, filter_list, lang_profile_list);
    raw_outcome(ranked.len(), lang_distances)
}

/// Each allowed language's distance from the text whose trigrams (packed), most frequent
/// first, are `ranked`, in the order of `lang_profile_list`. The published crate looks every trigram of
/// every profile up in the text's trigrams (300 lookups a language); here the text's own
/// trigrams (at most 600) are looked up once in an index of every profile, and each profile's
/// sum is corrected by what its trigrams found there. Same sums, same order, same result.
fn profile_distances(
    ranked: &[u64],
    filter_list: &FilterList,
    lang_profile_list: LangProfileList,
) -> Vec<(Lang, u32)> {
    let index = profile_index(lang_profile_list);
    // Per profile: sum over its trigrams found in the text of (their distance - the distance of a missing one).
    let mut found = vec![0i64; lang_profile_list.len()];
    for (position, key) in ranked.iter().enumerate() {
        if let Some(&(start, end)) = index.keys.get(key) {
            for &(profile, rank) in &index.places[start as usize..end as usize] {
                found[profile as usize] +=
                    (position as i64 - rank as i64).abs() - MAX_TRIGRAM_DISTANCE as i64;
            }
        }
    }
    let count = ranked.len() as i64;
    lang_profile_list
        .iter()
        .zip(found)
        .filter(|((lang, _), _)| filter_list.is_allowed(*lang))
        .map(|(&(lang, lang_trigrams), found)| {
            let mut total = lang_trigrams.len() as i64 * MAX_TRIGRAM_DISTANCE as i64 + found;
            if (MAX_TRIGRAM_DISTANCE as i64) > count {
                total -= (MAX_TRIGRAM_DISTANCE as i64 - count) * MAX_TRIGRAM_DISTANCE as i64;
            }
            (lang, total.clamp(0, MAX_TOTAL_DISTANCE as i64) as u32)
        })
        .collect()
}

/// Scores from the languages' distances (sorted by distance here), the text having
/// `unique_trigrams_count` ranked trigrams.
fn raw_outcome(unique_trigrams_count: usize, mut lang_distances: Vec<(Lang, u32)>) -> RawOutcome {
    // Sort languages by distance
    lang_distances.sort_unstable_by_key(|(_, dist)| *dist);

    let max_dist = unique_trigrams_count as u32 * MAX_TRIGRAM_DISTANCE;

    let raw_scores = lang_distances
        .iter()
        .map(|&(lang, distance)| (lang, distance_to_raw_score(distance, max_dist)))
        .collect();

    RawOutcome {
        trigrams_count: unique_trigrams_count,
        scores: raw_scores,
        raw_distances: lang_distances,
    }
}

/// Every place a trigram has in a list's profiles.
struct ProfileIndex {
    /// Per packed trigram, its range of `places`.
    keys: HashMap<u64, (u32, u32)>,
    /// (profile, rank), grouped by trigram.
    places: Vec<(u16, u16)>,
}

/// The [`ProfileIndex`] of `lang_profile_list`, built once per list.
fn profile_index(lang_profile_list: LangProfileList) -> &'static ProfileIndex {
    static INDEXES: [OnceLock<ProfileIndex>; 5] = [
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
        OnceLock::new(),
    ];
    let lists = [
        LATIN_LANGS,
        CYRILLIC_LANGS,
        ARABIC_LANGS,
        DEVANAGARI_LANGS,
        HEBREW_LANGS,
    ];
    let slot = lists
        .iter()
        .position(|list| std::ptr::eq(*list, lang_profile_list))
        .expect("a profile list of this crate");
    INDEXES[slot].get_or_init(|| {
        let mut places: Vec<(u64, u16, u16)> = lang_profile_list
            .iter()
            .enumerate()
            .flat_map(|(profile, (_, trigrams))| {
                trigrams
                    .iter()
                    .enumerate()
                    .map(move |(rank, &trigram)| (pack(trigram), profile as u16, rank as u16))
            })
            .collect();
        places.sort_unstable();
        let mut keys: HashMap<u64, (u32, u32)> = HashMap::new();
        for (at, &(key, _, _)) in places.iter().enumerate() {
            keys.entry(key).or_insert((at as u32, at as u32)).1 = at as u32 + 1;
        }
        ProfileIndex {
            keys,
            places: places
                .into_iter()
                .map(|(_, profile, rank)| (profile, rank))
                .collect(),
        }
    })
}

/// The published crate's scoring, kept to check [`profile_distances`] against.
#[cfg(test)]
fn calculate_scores_in_profiles_published(
    text: &Text,
    filter_list: &FilterList,
    lang_profile_list: LangProfileList,
) -> RawOutcome {
    let mut lang_distances: Vec<(Lang, u32)> = vec![];

    let TrigramsWithPositions {
        trigram_positions, ..
    } = get_trigrams_with_positions(&text.lowercase());
    let unique_trigrams_count = trigram_positions.len();

    for &(lang, lang_trigrams) in lang_profile_list {
        if !filter_list.is_allowed(lang) {
            continue;
        }
        let dist = calculate_distance(lang_trigrams, &trigram_positions);
        lang_distances.push(((lang), dist));
    }

    raw_outcome(unique_trigrams_count, lang_distances)
}

#[cfg(test)]
fn calculate_distance(lang_trigrams: LangProfile, text_trigrams: &HashMap<Trigram, u32>) -> u32 {
    let mut total_dist = 0u32;

    for (i, &trigram) in lang_trigrams.iter().enumerate() {
        let dist = match text_trigrams.get(&trigram) {
            Some(&n) => (n as i32 - i as i32).unsigned_abs(),
            None => MAX_TRIGRAM_DISTANCE,
        };
        total_dist += dist;
    }

    let count = text_trigrams.len() as u32;

    if MAX_TRIGRAM_DISTANCE > count {
        let delta = MAX_TRIGRAM_DISTANCE - count;
        total_dist -= delta * MAX_TRIGRAM_DISTANCE;
    }

    total_dist.clamp(0, MAX_TOTAL_DISTANCE)
}

#[inline]
fn distance_to_raw_score(distance: u32, max_distance: u32) -> f64 {
    let similarity = max_distance - distance;
    similarity as f64 / max_distance as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_when_german_is_given() {
        let text = "Die Ordnung muss für immer in diesem Codebase bleiben";
        let iq = InternalQuery {
            text: Text::new(text),
            filter_list: &FilterList::default(),
            multi_lang_script: MultiLangScript::Latin,
        };
        let raw_outcome = raw_detect(&iq);

        assert_eq!(raw_outcome.trigrams_count, 50);

        let &(first_lang, first_score) = raw_outcome.scores.first().unwrap();
        let &(_last_lang, last_score) = raw_outcome.scores.last().unwrap();

        assert_eq!(first_lang, Lang::Deu);

        assert!(first_score >= 0.0);
        assert!(first_score <= 1.0);

        assert!(last_score >= 0.0);
        assert!(last_score <= 1.0);
    }
}

#[cfg(test)]
mod index_tests {
    use super::*;

    /// A seeded generator of texts over `alphabet`: words of 1 to 9 letters, punctuation,
    /// digits and line breaks between them.
    fn seeded_texts(alphabet: &[char], count: usize, seed: u64) -> Vec<String> {
        let mut state = seed;
        let mut next = move |below: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) as usize) % below.max(1)
        };
        (0..count)
            .map(|_| {
                let words = 1 + next(400);
                let mut text = String::new();
                for _ in 0..words {
                    for _ in 0..1 + next(9) {
                        text.push(alphabet[next(alphabet.len())]);
                    }
                    text.push(match next(12) {
                        0 => '.',
                        1 => '\n',
                        2 => '7',
                        _ => ' ',
                    });
                }
                text
            })
            .collect()
    }

    /// Texts made of each profile's own trigrams (so that many are found, at many ranks),
    /// in a seeded order, some repeated.
    fn profile_texts(list: LangProfileList, seed: u64) -> Vec<String> {
        let mut state = seed;
        let mut next = move |below: usize| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) as usize) % below.max(1)
        };
        list.iter()
            .flat_map(|(_, trigrams)| {
                (0..4)
                    .map(|_| {
                        let take = 1 + next(trigrams.len() * 3);
                        (0..take)
                            .map(|_| {
                                let Trigram(a, b, c) = trigrams[next(trigrams.len())];
                                format!("{a}{b}{c}")
                            })
                            .collect::<Vec<_>>()
                            .join(if next(2) == 0 { "" } else { " " })
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn the_index_gives_the_published_scores() {
        let lists = [
            (
                LATIN_LANGS,
                "abcdefghijklmnopqrstuvwxyzäöüßéèçñåøæœąęłńśźżčřšžőű"
                    .chars()
                    .collect::<Vec<_>>(),
            ),
            (
                CYRILLIC_LANGS,
                "абвгдеёжзийклмнопрстуфхцчшщъыьэюяіїєґўјљњћџ"
                    .chars()
                    .collect(),
            ),
            (
                ARABIC_LANGS,
                "ابتثجحخدذرزسشصضطظعغفقكلمنهويپچژگی".chars().collect(),
            ),
            (
                DEVANAGARI_LANGS,
                "अआइईउऊएऐओऔकखगघचछजझटठडढणतथदधनपफबभमयरलवशषसह"
                    .chars()
                    .collect(),
            ),
            (
                HEBREW_LANGS,
                "אבגדהוזחטיכלמנסעפצקרשתםןףץך".chars().collect(),
            ),
        ];
        let latin_langs: Vec<Lang> = LATIN_LANGS.iter().map(|(lang, _)| *lang).collect();
        let filters = [
            FilterList::default(),
            FilterList::deny(latin_langs[..latin_langs.len() / 2].to_vec()),
            FilterList::allow(latin_langs[latin_langs.len() / 3..].to_vec()),
        ];
        let mut compared = 0;
        for (seed, (list, alphabet)) in lists.into_iter().enumerate() {
            let mut texts = seeded_texts(&alphabet, 150, seed as u64);
            texts.extend(profile_texts(list, seed as u64 + 100));
            texts.extend(
                [
                    "",
                    " ",
                    "a",
                    "ab",
                    "abc abc abc",
                    "The quick brown fox. Der schnelle braune Fuchs.",
                ]
                .map(String::from),
            );
            for text in &texts {
                let text = Text::new(text);
                for filter in &filters {
                    let fast = calculate_scores_in_profiles(&text, filter, list);
                    let published = calculate_scores_in_profiles_published(&text, filter, list);
                    assert_eq!(fast.trigrams_count, published.trigrams_count);
                    assert_eq!(
                        fast.raw_distances,
                        published.raw_distances,
                        "{:?}",
                        &*text.lowercase()
                    );
                    // Bit for bit (an empty text scores NaN in both).
                    let bits = |scores: &[(Lang, f64)]| {
                        scores
                            .iter()
                            .map(|(l, s)| (*l, s.to_bits()))
                            .collect::<Vec<_>>()
                    };
                    assert_eq!(bits(&fast.scores), bits(&published.scores));
                    compared += 1;
                }
            }
        }
        assert!(compared > 2_000, "{compared}");
    }
}
