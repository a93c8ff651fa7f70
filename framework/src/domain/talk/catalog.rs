//! Rules of the call for papers' catalogue: session types, tracks and tags (and objects
//! like them, of one table of an event). Names are told apart as the event's main language
//! shows them; colours are `#rgb` or `#rrggbb`; a track or session type in use cannot be
//! deleted, nor a track a reviewer team is limited to (the team would silently review every
//! track).
//!
//! Checks that must hold until a write commits take the row they guard first: on
//! PostgreSQL with `crate::db::lock_clause` (`FOR UPDATE`); SQLite's write transactions run one at a
//! time (`crate::db::begin_write`).

use sea_orm::{ConnectionTrait, DbErr, Statement};
use serde_json::Value;

use crate::domain::refusal::Refusal;
use crate::values::I18nString;

/// Whether `text` is a colour as `#rgb` or `#rrggbb`.
pub fn is_color(text: &str) -> bool {
    text.strip_prefix('#')
        .is_some_and(|hex| matches!(hex.len(), 3 | 6) && hex.chars().all(|c| c.is_ascii_hexdigit()))
}

/// A stored multi-language name as the event's main language `locale` shows it.
pub fn shown_name(name: &Value, locale: &str) -> String {
    I18nString::from_stored(name).localize(locale)
}

/// Whether another row of `table` (one of the catalogue's tables: a name the code gives,
/// never input) of the event than `except` has a `name` the main language `locale` shows
/// as it shows `name`.
pub async fn name_taken(
    db: &impl ConnectionTrait,
    table: &'static str,
    event_id: i64,
    except: Option<i64>,
    name: &Value,
    locale: &str,
) -> Result<bool, DbErr> {
    let rows = db
        .query_all_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            format!("SELECT name FROM {table} WHERE event_id = $1 AND id <> $2"),
            [event_id.into(), except.unwrap_or(0).into()],
        ))
        .await?;
    let shown = shown_name(name, locale);
    for row in rows {
        if shown_name(&row.try_get::<Value>("", "name")?, locale) == shown {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Locks a track's row (PostgreSQL) and refuses its deletion (400) while a submission uses
/// it or a team is limited to it: deleting it would drop the team's limit to it, and a team
/// limited to it alone would then review every track. The teams must change their limits
/// first. Holds until the transaction ends: a team limited to it meanwhile, or a submission
/// given it, waits for the deletion and then finds no track.
pub async fn check_track_deletion(db: &impl ConnectionTrait, track_id: i64) -> Result<(), Refusal> {
    crate::db::lock_row(db, "talk_tracks", track_id).await?;
    if any(
        db,
        "SELECT track_id FROM team_tracks WHERE track_id = $1 LIMIT 1",
        track_id,
    )
    .await?
    {
        return Err(Refusal::bad_request(
            "Reviewer teams are limited to this track: change their track limits before \
             deleting it.",
        ));
    }
    if any(
        db,
        "SELECT id FROM talk_submissions WHERE track_id = $1 LIMIT 1",
        track_id,
    )
    .await?
    {
        return Err(Refusal::bad_request(
            "This track is in use in a proposal and cannot be deleted.",
        ));
    }
    Ok(())
}

/// Locks a session type's row (PostgreSQL) and refuses its deletion (400) while a
/// submission uses it; holds until the transaction ends.
pub async fn check_submission_type_deletion(
    db: &impl ConnectionTrait,
    type_id: i64,
) -> Result<(), Refusal> {
    crate::db::lock_row(db, "talk_submission_types", type_id).await?;
    if any(
        db,
        "SELECT id FROM talk_submissions WHERE submission_type_id = $1 LIMIT 1",
        type_id,
    )
    .await?
    {
        return Err(Refusal::bad_request(
            "This session type is in use in a proposal and cannot be deleted.",
        ));
    }
    Ok(())
}

/// Whether the query, with `id` as `$1`, finds a row.
async fn any(db: &impl ConnectionTrait, sql: &str, id: i64) -> Result<bool, DbErr> {
    Ok(db
        .query_one_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            sql,
            [id.into()],
        ))
        .await?
        .is_some())
}
