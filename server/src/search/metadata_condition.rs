//! A metadata filter's condition: a plain value (equality, as before), or an object of
//! operators in the form RAG stores use — `$eq`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte`, `$in`,
//! `$nin`, `$exists` — all of which must hold. Numbers compare as numbers (a numeric string
//! on either side too, as front matter and the CLI give them), other strings in byte order
//! (ISO dates sort right).

use std::cmp::Ordering;

use serde_json::Value;

/// The operators a condition object may hold.
pub const OPERATORS: [&str; 9] = ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists"];

/// A condition's operator (`$eq` ... `$exists`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    Eq,
    Ne,
    Gt,
    Gte,
    Lt,
    Lte,
    In,
    Nin,
    Exists,
}

/// A condition read and checked once per search, then held against every document.
#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// A plain value: the document's must equal it.
    Equals(Value),
    /// Operators with their operands, all of which must hold.
    All(Vec<(Operator, Value)>),
}

impl Condition {
    /// Reads a filter's value for `key`: an object whose every key starts with `$` is
    /// operators (each checked with its operand; the error names the key and why), anything
    /// else a value to equal.
    pub fn parse(key: &str, wanted: &Value) -> Result<Self, String> {
        let Some(operators) = wanted
            .as_object()
            .filter(|map| !map.is_empty() && map.keys().all(|k| k.starts_with('$')))
        else {
            return Ok(Self::Equals(wanted.clone()));
        };
        let mut all = Vec::with_capacity(operators.len());
        for (name, operand) in operators {
            let operator = match name.as_str() {
                "$eq" => Operator::Eq,
                "$ne" => Operator::Ne,
                "$gt" | "$gte" | "$lt" | "$lte" if !(operand.is_number() || operand.is_string()) => {
                    return Err(format!(
                        "metadata.{key}: {name} needs a number or a string, got {operand}"
                    ))
                }
                "$gt" => Operator::Gt,
                "$gte" => Operator::Gte,
                "$lt" => Operator::Lt,
                "$lte" => Operator::Lte,
                "$in" | "$nin" if !operand.is_array() => {
                    return Err(format!("metadata.{key}: {name} needs a list, got {operand}"))
                }
                "$in" => Operator::In,
                "$nin" => Operator::Nin,
                "$exists" if !operand.is_boolean() => {
                    return Err(format!("metadata.{key}: $exists needs true or false, got {operand}"))
                }
                "$exists" => Operator::Exists,
                other => {
                    return Err(format!(
                        "metadata.{key}: unknown operator {other} (one of {})",
                        OPERATORS.join(", ")
                    ))
                }
            };
            all.push((operator, operand.clone()));
        }
        Ok(Self::All(all))
    }

    /// Does a document's value for the key (`None`: it has none) meet the condition? A list
    /// (a message's `to`, a record's list of authors) meets it where the list itself or any of
    /// its items does, and `$ne` / `$nin` where neither it nor any item is the value, as
    /// MongoDB and Qdrant read a list.
    pub fn holds(&self, actual: Option<&Value>) -> bool {
        let operators = match self {
            Self::Equals(wanted) => return actual.is_some_and(|actual| any_of(actual, |v| equal(v, wanted))),
            Self::All(operators) => operators,
        };
        let in_list = |actual: &Value, list: &Value| {
            list.as_array()
                .is_some_and(|list| list.iter().any(|v| equal(actual, v)))
        };
        operators.iter().all(|(operator, operand)| match (operator, actual) {
            (Operator::Exists, actual) => operand.as_bool() == Some(actual.is_some()),
            (Operator::Ne, actual) => !actual.is_some_and(|actual| any_of(actual, |v| equal(v, operand))),
            (Operator::Nin, actual) => !actual.is_some_and(|actual| any_of(actual, |v| in_list(v, operand))),
            (_, None) => false,
            (Operator::Eq, Some(actual)) => any_of(actual, |v| equal(v, operand)),
            (Operator::In, Some(actual)) => any_of(actual, |v| in_list(v, operand)),
            (Operator::Gt, Some(actual)) => any_of(actual, |v| compare(v, operand) == Some(Ordering::Greater)),
            (Operator::Gte, Some(actual)) => any_of(actual, |v| {
                matches!(compare(v, operand), Some(Ordering::Greater | Ordering::Equal))
            }),
            (Operator::Lt, Some(actual)) => any_of(actual, |v| compare(v, operand) == Some(Ordering::Less)),
            (Operator::Lte, Some(actual)) => any_of(actual, |v| {
                matches!(compare(v, operand), Some(Ordering::Less | Ordering::Equal))
            }),
        })
    }
}

/// Whether `test` holds for a value, or for any item of a list.
fn any_of(actual: &Value, test: impl Fn(&Value) -> bool) -> bool {
    test(actual) || actual.as_array().is_some_and(|items| items.iter().any(test))
}

/// Equality that lets a string match a number or boolean written the same way (the CLI's
/// values are strings).
#[allow(clippy::cmp_owned)] // a number or a bool compares as its JSON text
fn equal(actual: &Value, wanted: &Value) -> bool {
    if actual == wanted {
        return true;
    }
    match (actual, wanted) {
        (actual, Value::String(text)) if !actual.is_string() => actual.to_string() == *text,
        (Value::String(text), wanted) if !wanted.is_string() => wanted.to_string() == *text,
        _ => false,
    }
}

fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64(),
        Value::String(text) => text.trim().parse().ok(),
        _ => None,
    }
}

/// Two numbers (or numeric strings) as numbers, two other strings in byte order; else none.
fn compare(actual: &Value, wanted: &Value) -> Option<Ordering> {
    if actual.is_number() || wanted.is_number() {
        return number(actual)?.partial_cmp(&number(wanted)?);
    }
    match (actual, wanted) {
        (Value::String(a), Value::String(b)) => match (number(actual), number(wanted)) {
            (Some(a), Some(b)) => a.partial_cmp(&b),
            _ => Some(a.as_str().cmp(b.as_str())),
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn holds(actual: Option<&Value>, wanted: &Value) -> bool {
        Condition::parse("k", wanted).is_ok_and(|condition| condition.holds(actual))
    }

    fn validate(key: &str, wanted: &Value) -> Result<(), String> {
        Condition::parse(key, wanted).map(|_| ())
    }

    #[test]
    fn operators_compare_numbers_strings_and_dates() {
        let year = json!(2024);
        assert!(holds(Some(&year), &json!({ "$gte": 2020, "$lt": 2025 })));
        assert!(!holds(Some(&year), &json!({ "$gt": 2024 })));
        assert!(
            holds(Some(&year), &json!({ "$gt": "2023" })),
            "a numeric string compares as a number"
        );
        assert!(
            holds(Some(&json!("10")), &json!({ "$gt": "9" })),
            "numeric strings as numbers, not bytes"
        );
        assert!(holds(
            Some(&json!("2024-03-01")),
            &json!({ "$gte": "2024-01-01", "$lte": "2024-12-31" })
        ));
        assert!(
            !holds(Some(&json!("draft")), &json!({ "$gt": 3 })),
            "no order between a word and a number"
        );
        assert!(holds(Some(&json!("legal")), &json!({ "$in": ["finance", "legal"] })));
        assert!(!holds(Some(&json!("hr")), &json!({ "$in": ["finance", "legal"] })));
        assert!(holds(Some(&json!("hr")), &json!({ "$nin": ["finance", "legal"] })));
        assert!(
            holds(None, &json!({ "$nin": ["x"] })) && holds(None, &json!({ "$ne": "x" })),
            "a missing value is none of them"
        );
        assert!(!holds(None, &json!({ "$gte": 1 })) && !holds(None, &json!({ "$eq": 1 })));
        assert!(holds(None, &json!({ "$exists": false })) && !holds(Some(&year), &json!({ "$exists": false })));
        assert!(
            holds(Some(&year), &json!("2024")) && holds(Some(&json!("2024")), &json!(2024)),
            "plain values are equality"
        );
        assert!(
            holds(Some(&json!({ "a": 1 })), &json!({ "a": 1 })),
            "an object without operators is a value"
        );
    }

    #[test]
    fn a_list_meets_a_condition_where_any_item_does() {
        let to = json!(["team@example.com", "ops@example.com"]);
        assert!(holds(Some(&to), &json!("ops@example.com")));
        assert!(
            holds(Some(&to), &json!(["team@example.com", "ops@example.com"])),
            "the list itself"
        );
        assert!(!holds(Some(&to), &json!("hr@example.com")));
        assert!(holds(
            Some(&to),
            &json!({ "$in": ["hr@example.com", "ops@example.com"] })
        ));
        assert!(
            !holds(Some(&to), &json!({ "$ne": "ops@example.com" })),
            "an item is the value"
        );
        assert!(holds(Some(&to), &json!({ "$nin": ["hr@example.com"] })));
        assert!(!holds(
            Some(&to),
            &json!({ "$nin": ["hr@example.com", "team@example.com"] })
        ));
        let years = json!([2019, 2024]);
        assert!(holds(Some(&years), &json!({ "$gte": 2024 })) && !holds(Some(&years), &json!({ "$gt": 2024 })));
        assert!(
            !holds(Some(&json!([])), &json!({ "$in": ["x"] })) && holds(Some(&json!([])), &json!({ "$exists": true }))
        );
    }

    #[test]
    fn bad_operators_and_operands_are_named() {
        assert_eq!(validate("year", &json!({ "$gte": 2020, "$lt": "2025" })), Ok(()));
        assert_eq!(
            validate("year", &json!({ "$between": [1, 2] })).unwrap_err(),
            "metadata.year: unknown operator $between (one of $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin, $exists)"
        );
        assert_eq!(
            validate("tag", &json!({ "$in": "legal" })).unwrap_err(),
            "metadata.tag: $in needs a list, got \"legal\""
        );
        assert!(validate("year", &json!({ "$gt": [1] }))
            .unwrap_err()
            .contains("$gt needs a number or a string"));
        assert!(validate("x", &json!({ "$exists": "yes" })).is_err());
    }
}
