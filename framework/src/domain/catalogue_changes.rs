//! When an event's catalogue last changed: the time the item, category and question lists
//! answer as `Last-Modified`, so that scanners asking `If-Modified-Since` get 304 only when
//! nothing they show changed. Triggers (migration m0019) keep it in `catalogue_changes` on
//! every write of the event, its tax rules, categories, items (variations, add-ons,
//! bundles) and questions (options, items), in the writing transaction.

use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DbErr, FromQueryResult, Statement};

use super::cache::Cache;

/// When the event's catalogue last changed (microsecond precision), or `None` if it never
/// did since change times are kept. Kept in the process cache for its generation: the
/// triggers write with the configuration tables, whose writes move the generation.
pub async fn modified(
    db: &impl ConnectionTrait,
    cache: Option<(&Cache, u64)>,
    event_id: i64,
) -> Result<Option<DateTime<Utc>>, DbErr> {
    let key = format!("catalogue_modified:{event_id}");
    let micros = match cache.and_then(|(c, g)| c.answer(g, &key)) {
        Some(kept) => <[u8; 8]>::try_from(&kept[..]).ok().map(i64::from_be_bytes),
        None => None,
    };
    let micros = match micros {
        Some(m) => m,
        None => {
            #[derive(FromQueryResult)]
            struct Row {
                modified_us: i64,
            }
            let m = Row::find_by_statement(Statement::from_sql_and_values(
                db.get_database_backend(),
                "SELECT modified_us FROM catalogue_changes WHERE event_id = $1",
                [event_id.into()],
            ))
            .one(db)
            .await?
            .map_or(0, |r| r.modified_us);
            if let Some((c, g)) = cache {
                c.keep_answer(g, key, m.to_be_bytes().to_vec().into());
            }
            m
        }
    };
    Ok((micros > 0)
        .then(|| DateTime::from_timestamp_micros(micros))
        .flatten())
}

/// Whether a copy made at `since` (an `If-Modified-Since` time, whole seconds) is still
/// current: the catalogue has a change time and changed no later than that.
pub fn unchanged_since(modified: Option<DateTime<Utc>>, since: DateTime<Utc>) -> bool {
    modified.is_some_and(|m| m <= since)
}

/// The `Last-Modified` time to answer for a change at `modified`: its second rounded up,
/// once that second and one more have passed, else none. HTTP dates have whole seconds, and
/// [`unchanged_since`] compares the exact change time with them: rounding up makes the
/// client's copy current, and waiting until the second is over keeps a later change in the
/// same second (which would round to the same date) from being taken for this one.
pub fn last_modified(modified: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let whole = modified.timestamp() + i64::from(modified.timestamp_subsec_micros() > 0);
    let rounded = DateTime::from_timestamp(whole, 0)?;
    (crate::values::now() >= rounded + chrono::TimeDelta::seconds(1)).then_some(rounded)
}
