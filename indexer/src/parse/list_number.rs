//! A list's number as word processors write it (`2.1`, `(b)`, `IV.`): the counter formats
//! DOCX's and ODT's list levels name.

/// How a level writes its counter.
#[derive(Clone, Copy, Default, PartialEq, Debug)]
pub(super) enum Format {
    #[default]
    Decimal,
    DecimalZero,
    DecimalFullWidth,
    EnclosedCircle,
    /// Word's letters, and OpenDocument's with `style:num-letter-sync`: a-z, aa, bb, ...
    LowerLetter,
    UpperLetter,
    /// OpenDocument's letters: a-z, aa, ab, ... (counting in base 26).
    LowerAlphabetic,
    UpperAlphabetic,
    LowerRoman,
    UpperRoman,
    Bullet,
    /// No number (`none`): the level text alone.
    Nothing,
}

impl Format {
    /// `n` as this format writes it.
    pub fn write(self, n: u32) -> String {
        match self {
            Self::Decimal | Self::Bullet => n.to_string(),
            Self::Nothing => String::new(),
            Self::DecimalZero if n < 10 => format!("0{n}"),
            Self::DecimalZero => n.to_string(),
            Self::DecimalFullWidth => n
                .to_string()
                .chars()
                .map(|d| char::from_u32(d as u32 - '0' as u32 + 0xFF10).unwrap_or(d))
                .collect(),
            Self::EnclosedCircle => match n {
                1..=20 => char::from_u32(0x2460 + n - 1).map(String::from).unwrap_or_default(),
                _ => n.to_string(),
            },
            Self::LowerLetter => letters(n).unwrap_or_else(|| n.to_string()),
            Self::UpperLetter => letters(n).map(|l| l.to_uppercase()).unwrap_or_else(|| n.to_string()),
            Self::LowerAlphabetic => alphabetic(n).unwrap_or_else(|| n.to_string()),
            Self::UpperAlphabetic => alphabetic(n).map(|l| l.to_uppercase()).unwrap_or_else(|| n.to_string()),
            Self::LowerRoman => roman(n).map(|r| r.to_lowercase()).unwrap_or_else(|| n.to_string()),
            Self::UpperRoman => roman(n).unwrap_or_else(|| n.to_string()),
        }
    }
}

/// Word's letters: a-z, then aa-zz, aaa...; none past ten letters (a counter a file starts
/// at four billion).
fn letters(n: u32) -> Option<String> {
    let n = n.checked_sub(1)?;
    let repeats = n / 26 + 1;
    let letter = char::from(b'a' + (n % 26) as u8);
    (repeats <= 10).then(|| std::iter::repeat_n(letter, repeats as usize).collect())
}

/// Letters counting in base 26: a-z, aa-az, ba ... (none for 0).
fn alphabetic(n: u32) -> Option<String> {
    let mut n = u64::from(n);
    if n == 0 {
        return None;
    }
    let mut written = Vec::new();
    while n > 0 {
        n -= 1;
        written.push(b'a' + (n % 26) as u8);
        n /= 26;
    }
    written.reverse();
    String::from_utf8(written).ok()
}

/// Roman numerals from 1 to 3999.
fn roman(mut n: u32) -> Option<String> {
    if !(1..4000).contains(&n) {
        return None;
    }
    const NUMERALS: [(u32, &str); 13] = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ];
    let mut written = String::new();
    for (value, numeral) in NUMERALS {
        while n >= value {
            written.push_str(numeral);
            n -= value;
        }
    }
    Some(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_written_as_word_processors_write_them() {
        let cases = [
            (Format::Decimal, 12, "12"),
            (Format::DecimalZero, 7, "07"),
            (Format::DecimalFullWidth, 12, "１２"),
            (Format::EnclosedCircle, 3, "③"),
            (Format::EnclosedCircle, 21, "21"),
            (Format::LowerLetter, 1, "a"),
            (Format::LowerLetter, 28, "bb"),
            (Format::UpperLetter, 26, "Z"),
            (Format::LowerAlphabetic, 28, "ab"),
            (Format::UpperAlphabetic, 702, "ZZ"),
            (Format::UpperAlphabetic, 703, "AAA"),
            (Format::LowerAlphabetic, 0, "0"),
            (Format::LowerLetter, u32::MAX, "4294967295"),
            (Format::UpperRoman, 1994, "MCMXCIV"),
            (Format::LowerRoman, 4, "iv"),
            (Format::UpperRoman, 4000, "4000"),
            (Format::UpperRoman, 0, "0"),
        ];
        for (format, n, written) in cases {
            assert_eq!(format.write(n), written, "{format:?} {n}");
        }
    }
}
