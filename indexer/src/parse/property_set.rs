//! The title a legacy Office file's properties give it: the `\u{5}SummaryInformation` stream of
//! its compound file (MS-OLEPS), property 2 (PIDSI_TITLE), in the code page property 1 names.

use encoding_rs::Encoding;

use super::compound_file::{u32_at, CompoundFile};
use super::legacy_encoding::windows_code_page;

const CODE_PAGE: u32 = 1;
const TITLE: u32 = 2;
const VT_I2: u32 = 2;
const VT_LPSTR: u32 = 0x1E;
const VT_LPWSTR: u32 = 0x1F;

/// The file's title, if its summary information holds a non-empty one.
pub(super) fn summary_title(file: &CompoundFile) -> Option<String> {
    title_in(file, "\u{5}SummaryInformation")
}

/// The title a property set stream of the file holds (Hancom's HWP names its own stream
/// `\u{5}HwpSummaryInformation`), if a non-empty one.
pub(super) fn title_in(file: &CompoundFile, stream: &str) -> Option<String> {
    let stream = file.stream(stream)?.ok()?;
    // The stream's header (28 bytes), then its first section's format id and offset.
    let section = usize::try_from(u32_at(&stream, 28 + 16)?).ok()?;
    let count = u32_at(&stream, section.checked_add(4)?)? as usize;
    let property = |id: u32| {
        (0..count.min(stream.len() / 8)).find_map(|i| {
            let slot = section + 8 + 8 * i;
            (u32_at(&stream, slot)? == id).then_some(())?;
            section.checked_add(u32_at(&stream, slot + 4)? as usize)
        })
    };
    let code_page = property(CODE_PAGE)
        .filter(|at| u32_at(&stream, *at) == Some(VT_I2))
        .and_then(|at| Some(u16::from_le_bytes(stream.get(at + 4..at + 6)?.try_into().ok()?)));
    let at = property(TITLE)?;
    let length = u32_at(&stream, at + 4)? as usize;
    let title = match u32_at(&stream, at)? {
        VT_LPSTR => {
            let bytes = stream.get(at + 8..(at + 8).checked_add(length)?)?;
            let encoding: &'static Encoding = match code_page {
                Some(65001) => encoding_rs::UTF_8,
                Some(number) => windows_code_page(i32::from(number as i16)).unwrap_or(encoding_rs::WINDOWS_1252),
                None => encoding_rs::WINDOWS_1252,
            };
            encoding.decode_without_bom_handling(bytes).0.into_owned()
        }
        VT_LPWSTR => {
            let bytes = stream.get(at + 8..(at + 8).checked_add(length.checked_mul(2)?)?)?;
            let units: Vec<u16> = bytes
                .chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect();
            String::from_utf16_lossy(&units)
        }
        _ => return None,
    };
    let title = title.trim_matches(|c: char| c == '\0' || c.is_whitespace()).to_string();
    (!title.is_empty()).then_some(title)
}

#[cfg(test)]
mod tests {
    use super::super::compound_file::fixtures::{PARTS_XLS, REPORT_DOC, XLWT_XLS};
    use super::*;

    #[test]
    fn titles_from_summary_information() {
        let title = |bytes| summary_title(&CompoundFile::open(bytes).unwrap());
        assert_eq!(title(REPORT_DOC).as_deref(), Some("Quarterly maintenance report"));
        assert_eq!(title(PARTS_XLS).as_deref(), Some("Spare parts"));
        // xlwt writes no summary information.
        assert_eq!(title(XLWT_XLS), None);
    }
}
