//! placeholder
use super::{ParseError, Parsed};
use crate::source::RawDocument;
pub(super) fn parse(_raw: &RawDocument) -> Result<Parsed, ParseError> {
    Err(ParseError::NoText)
}
