//! Cursor pagination shared by the workflow lists (cases, CDD customers, EDD requests).
//!
//! Lists are ordered newest first by (`created_at_ms`, `id`), both stored on every row, so a page
//! ends at a position that later inserts never move. The cursor handed to the caller as `next` is
//! that position, hex-encoded so it reads as one opaque token; the next page starts strictly
//! after it.

/// Default and largest page sizes.
pub const DEFAULT_LIMIT: u32 = 25;
pub const MAX_LIMIT: u32 = 100;

/// Where a page ends: the last row's creation time and id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cursor {
    pub created_at_ms: i64,
    pub id: String,
}

impl Cursor {
    pub fn encode(&self) -> String {
        hex::encode(format!("{}:{}", self.created_at_ms, self.id))
    }

    /// Parses a token made by [`Cursor::encode`]; `None` for anything else.
    pub fn decode(token: &str) -> Option<Cursor> {
        let bytes = hex::decode(token.trim()).ok()?;
        let text = String::from_utf8(bytes).ok()?;
        let (millis, id) = text.split_once(':')?;
        if id.is_empty() {
            return None;
        }
        Some(Cursor {
            created_at_ms: millis.parse().ok()?,
            id: id.to_owned(),
        })
    }
}

/// Appends the "after this cursor" condition (newest-first order) to `sql`, binding from
/// placeholder `$next`; returns the next free placeholder number.
pub fn after_cursor(sql: &mut String, next: usize) -> usize {
    sql.push_str(&format!(
        " AND (created_at_ms < ${next} OR (created_at_ms = ${next} AND id < ${}))",
        next + 1
    ));
    next + 2
}

/// Ends a page fetched with one row more than `limit`: drops the extra row and returns the
/// cursor of the page's last row when there is more to read.
pub fn finish_page<T>(
    rows: &mut Vec<T>,
    limit: usize,
    position: impl Fn(&T) -> Cursor,
) -> Option<Cursor> {
    if rows.len() <= limit {
        return None;
    }
    rows.truncate(limit);
    rows.last().map(position)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_survives_its_round_trip_and_garbage_is_refused() {
        let cursor = Cursor {
            created_at_ms: 1_767_225_600_123,
            id: "0190-abc".to_owned(),
        };
        assert_eq!(Cursor::decode(&cursor.encode()), Some(cursor));
        assert_eq!(Cursor::decode("not hex"), None);
        assert_eq!(Cursor::decode(&hex::encode("12")), None);
        assert_eq!(Cursor::decode(&hex::encode("x:id")), None);
    }
}
