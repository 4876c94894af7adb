//! Per-user scoping (seed 001: every point carries the `user_id` of the user who owns it, and
//! every search is "strictly filtered by `user_id`"). An upload's `user_id` becomes each of its
//! documents' `metadata.user_id` (over any the file itself carries); a search that names one
//! sees that user's documents only. A search that names none sees every document: the server
//! trusts the caller to scope its users' searches, as seed 001's handler does.

use serde_json::Value;

use crate::http::api_error::ApiError;
pub use crate::ingest::online::USER_ID_KEY;
use crate::search::filter::Filters;

/// The longest user id taken.
pub const MAX_USER_ID_CHARS: usize = 256;

/// A `user_id` as sent (a form field's text or a JSON string), checked: 1 to
/// [`MAX_USER_ID_CHARS`] characters with no control characters, surrounding blanks trimmed.
pub fn parse_user_id(field: &str, text: &str) -> Result<String, ApiError> {
    let user_id = text.trim();
    if user_id.is_empty() {
        return Err(ApiError::field(field, format!("{field} must not be empty")));
    }
    if user_id.chars().count() > MAX_USER_ID_CHARS {
        return Err(ApiError::field(
            field,
            format!("{field} is longer than {MAX_USER_ID_CHARS} characters"),
        ));
    }
    if user_id.chars().any(char::is_control) {
        return Err(ApiError::field(
            field,
            format!("{field} must not hold control characters"),
        ));
    }
    Ok(user_id.to_string())
}

/// The optional `user_id` member of a JSON request (`field` names it in errors).
pub fn user_id_member(value: Option<&Value>, field: &str) -> Result<Option<String>, ApiError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => parse_user_id(field, text).map(Some),
        Some(_) => Err(ApiError::field(field, format!("{field} must be a string"))),
    }
}

/// Narrows `filters` to `user_id`'s documents, when one is given.
pub fn scope_to_user(filters: &mut Filters, user_id: Option<String>) {
    if let Some(user_id) = user_id {
        filters.metadata.insert(USER_ID_KEY.into(), Value::String(user_id));
    }
}

/// Does a file record (its `metadata`) belong to `user_id`? Every file does when none is given.
pub fn owned_by(metadata: &serde_json::Map<String, Value>, user_id: Option<&str>) -> bool {
    user_id.is_none_or(|wanted| metadata.get(USER_ID_KEY).and_then(Value::as_str) == Some(wanted))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_id_is_trimmed_and_bounded() {
        assert_eq!(parse_user_id("user_id", "  alice ").unwrap(), "alice");
        assert!(parse_user_id("user_id", "   ").is_err());
        assert!(parse_user_id("user_id", "a\u{0}b").is_err());
        assert!(parse_user_id("user_id", &"x".repeat(MAX_USER_ID_CHARS)).is_ok());
        assert!(parse_user_id("user_id", &"x".repeat(MAX_USER_ID_CHARS + 1)).is_err());
        assert!(user_id_member(Some(&Value::from(7)), "user_id").is_err());
        assert_eq!(user_id_member(None, "user_id").unwrap(), None);
    }

    #[test]
    fn scoping_adds_one_metadata_condition() {
        let mut filters = Filters::default();
        scope_to_user(&mut filters, None);
        assert!(filters.metadata.is_empty());
        scope_to_user(&mut filters, Some("bob".into()));
        assert_eq!(filters.metadata[USER_ID_KEY], Value::from("bob"));
        let mut owned = serde_json::Map::new();
        assert!(owned_by(&owned, None));
        assert!(!owned_by(&owned, Some("bob")));
        owned.insert(USER_ID_KEY.into(), "bob".into());
        assert!(owned_by(&owned, Some("bob")));
        assert!(!owned_by(&owned, Some("alice")));
    }
}
