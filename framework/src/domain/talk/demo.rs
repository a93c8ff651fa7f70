//! A conference on the demo event: session types, tracks, tags, questions with options, a
//! dozen submissions in every state with their speakers and answers. Seeded once: an event
//! that already has session types keeps what it has.

use chrono::{Duration, Utc};
use sea_orm::{ConnectionTrait, DatabaseConnection, DbErr, Statement};
use serde_json::json;

use crate::db::{execute, insert_returning_id};
use crate::domain::tokens::{UNAMBIGUOUS, random_from};

const TITLES: [(&str, &str); 12] = [
    ("Ownership without tears", "submitted"),
    ("Async Rust in production", "submitted"),
    ("Ticket scanners at the gate", "submitted"),
    ("Writing a query planner for fun", "accepted"),
    ("What pretalx taught us", "accepted"),
    ("Accessible conference apps", "confirmed"),
    ("Zero-downtime migrations", "confirmed"),
    ("Keeping secrets secret", "confirmed"),
    ("Offline-first check-in", "rejected"),
    ("Why we rewrote it twice", "rejected"),
    ("Streaming talks on a budget", "withdrawn"),
    ("The conference that never was", "canceled"),
];

const SPEAKERS: [(&str, &str); 6] = [
    ("Ada Lovelace", "ada@example.org"),
    ("Grace Hopper", "grace@example.org"),
    ("Alan Turing", "alan@example.org"),
    ("Katherine Johnson", "katherine@example.org"),
    ("Edsger Dijkstra", "edsger@example.org"),
    ("Barbara Liskov", "barbara@example.org"),
];

/// Switches the talk side on for the event and seeds its call for papers when it has none.
pub async fn seed(db: &DatabaseConnection, event_id: i64) -> Result<(), DbErr> {
    execute(
        db,
        "UPDATE events SET talk_enabled = $1 WHERE id = $2",
        [true.into(), event_id.into()],
    )
    .await?;
    let seeded = db
        .query_one_raw(Statement::from_sql_and_values(
            db.get_database_backend(),
            "SELECT id FROM talk_submission_types WHERE event_id = $1",
            [event_id.into()],
        ))
        .await?
        .is_some();
    if seeded {
        return Ok(());
    }
    let txn = crate::db::begin_write(db).await?;
    let ev = event_id;
    let talk = insert_returning_id(
        &txn,
        "INSERT INTO talk_submission_types (event_id, name, default_duration) \
         VALUES ($1, $2, 30) RETURNING id",
        [ev.into(), json!({"en": "Talk", "de": "Vortrag"}).into()],
    )
    .await?;
    let workshop = insert_returning_id(
        &txn,
        "INSERT INTO talk_submission_types (event_id, name, default_duration) \
         VALUES ($1, $2, 90) RETURNING id",
        [
            ev.into(),
            json!({"en": "Workshop", "de": "Workshop"}).into(),
        ],
    )
    .await?;
    let mut tracks = Vec::new();
    for (i, (name, color)) in [("Systems", "#1f6feb"), ("People", "#d29922")]
        .iter()
        .enumerate()
    {
        tracks.push(
            insert_returning_id(
                &txn,
                "INSERT INTO talk_tracks (event_id, name, color, position) \
                 VALUES ($1, $2, $3, $4) RETURNING id",
                [
                    ev.into(),
                    json!({"en": name}).into(),
                    (*color).into(),
                    (i as i32).into(),
                ],
            )
            .await?,
        );
    }
    let mut tags = Vec::new();
    for (tag, public) in [
        ("beginner", true),
        ("deep dive", true),
        ("keynote candidate", false),
    ] {
        tags.push(
            insert_returning_id(
                &txn,
                "INSERT INTO talk_tags (event_id, tag, color, is_public) \
                 VALUES ($1, $2, '#6e7781', $3) RETURNING id",
                [ev.into(), tag.into(), public.into()],
            )
            .await?,
        );
    }
    let level = insert_returning_id(
        &txn,
        "INSERT INTO talk_questions (event_id, identifier, question, variant, target, \
         question_required, position, is_public) \
         VALUES ($1, 'LEVEL', $2, 'choices', 'submission', 'required', 1, $3) RETURNING id",
        [
            ev.into(),
            json!({"en": "Audience level"}).into(),
            true.into(),
        ],
    )
    .await?;
    let mut levels = Vec::new();
    for (i, answer) in ["Beginner", "Intermediate", "Expert"].iter().enumerate() {
        levels.push(
            insert_returning_id(
                &txn,
                "INSERT INTO talk_question_options (question_id, answer, position, identifier) \
                 VALUES ($1, $2, $3, $4) RETURNING id",
                [
                    level.into(),
                    json!({"en": answer}).into(),
                    (i as i32).into(),
                    answer.to_uppercase().into(),
                ],
            )
            .await?,
        );
    }
    let shirt = insert_returning_id(
        &txn,
        "INSERT INTO talk_questions (event_id, identifier, question, variant, target, \
         question_required, position, max_length) \
         VALUES ($1, 'SHIRT', $2, 'string', 'speaker', 'optional', 2, 10) RETURNING id",
        [ev.into(), json!({"en": "T-shirt size"}).into()],
    )
    .await?;
    let now = Utc::now();
    let mut speakers = Vec::new();
    for (i, (name, email)) in SPEAKERS.iter().enumerate() {
        let id = insert_returning_id(
            &txn,
            "INSERT INTO talk_speakers (event_id, code, name, email, biography, created, updated) \
             VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id",
            [
                ev.into(),
                random_from(UNAMBIGUOUS, 6).into(),
                (*name).into(),
                (*email).into(),
                format!("{name} speaks about computing.").into(),
                now.into(),
            ],
        )
        .await?;
        let size = ["S", "M", "L"][i % 3];
        execute(
            &txn,
            "INSERT INTO talk_answers (question_id, speaker_id, answer) VALUES ($1, $2, $3)",
            [shirt.into(), id.into(), size.into()],
        )
        .await?;
        speakers.push(id);
    }
    for (i, (title, state)) in TITLES.iter().enumerate() {
        let created = now - Duration::days(30 - i as i64);
        let id = insert_returning_id(
            &txn,
            "INSERT INTO talk_submissions (event_id, code, title, submission_type_id, track_id, \
             state, abstract, duration, content_locale, created, updated) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'en', $9, $9) RETURNING id",
            [
                ev.into(),
                random_from(UNAMBIGUOUS, 6).into(),
                (*title).into(),
                (if i % 4 == 3 { workshop } else { talk }).into(),
                tracks[i % 2].into(),
                (*state).into(),
                format!("A session on {}.", title.to_lowercase()).into(),
                (if i % 4 == 3 { 90 } else { 30 }).into(),
                created.into(),
            ],
        )
        .await?;
        execute(
            &txn,
            "INSERT INTO talk_submission_speakers (submission_id, speaker_id, position) \
             VALUES ($1, $2, 0)",
            [id.into(), speakers[i % speakers.len()].into()],
        )
        .await?;
        execute(
            &txn,
            "INSERT INTO talk_submission_tags (submission_id, tag_id) VALUES ($1, $2)",
            [id.into(), tags[i % tags.len()].into()],
        )
        .await?;
        let option = levels[i % levels.len()];
        let answer = insert_returning_id(
            &txn,
            "INSERT INTO talk_answers (question_id, submission_id, answer) \
             VALUES ($1, $2, $3) RETURNING id",
            [
                level.into(),
                id.into(),
                ["Beginner", "Intermediate", "Expert"][i % 3].into(),
            ],
        )
        .await?;
        execute(
            &txn,
            "INSERT INTO talk_answer_options (answer_id, option_id) VALUES ($1, $2)",
            [answer.into(), option.into()],
        )
        .await?;
    }
    crate::db::commit(txn).await
}
