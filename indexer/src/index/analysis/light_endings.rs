//! The step Lucene's light stemmers of Indian languages end with (Telugu's, Bengali's): one
//! ending taken off a word already in normal form, the first that fits of groups tried in
//! order, each group only on a word long enough that a stem stays.

use std::borrow::Cow;

/// Groups of endings, tried in order: `(more_than, endings)` takes one of `endings` off a
/// word of more than `more_than` characters.
pub type EndingGroups = [(usize, &'static [&'static str])];

/// `normal` with the first ending of `groups` that fits taken off (the first group whose
/// length it passes and one of whose endings it ends with), or as it is.
pub fn without_ending<'a>(normal: Cow<'a, str>, groups: &EndingGroups) -> Cow<'a, str> {
    let chars = normal.chars().count();
    let ending = groups.iter().find_map(|&(more_than, endings)| {
        (chars > more_than)
            .then(|| endings.iter().find(|ending| normal.ends_with(**ending)))
            .flatten()
    });
    let Some(ending) = ending else {
        return normal;
    };
    let end = normal.len() - ending.len();
    match normal {
        Cow::Borrowed(word) => Cow::Borrowed(&word[..end]),
        Cow::Owned(mut word) => {
            word.truncate(end);
            Cow::Owned(word)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_group_that_fits_gives_the_ending() {
        const GROUPS: &EndingGroups = &[(5, &["ings"]), (3, &["ing", "s"]), (1, &["g"])];
        for (word, want) in [
            // Long enough for the first group.
            ("runnings", "runn"),
            ("things", "th"),
            // Too short for it: the next group, its first ending that fits.
            ("sings", "sing"),
            ("sing", "s"),
            // No ending of a group it passes: the next group's.
            ("bag", "ba"),
            // Too short for any, or no ending fits.
            ("g", "g"),
            ("cat", "cat"),
        ] {
            assert_eq!(without_ending(Cow::Borrowed(word), GROUPS), want, "{word}");
            assert_eq!(without_ending(Cow::Owned(word.to_string()), GROUPS), want, "{word}");
        }
        assert!(matches!(
            without_ending(Cow::Borrowed("sing"), GROUPS),
            Cow::Borrowed(_)
        ));
    }
}
