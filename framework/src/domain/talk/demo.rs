//! A conference on the demo event: session types, tracks, tags, questions with options, a
//! dozen submissions in every state with their speakers and answers, rooms and a released
//! schedule. Seeded once: an event that already has session types keeps what it has.

use chrono::Duration;
use sea_orm::{ConnectionTrait, DatabaseConnection, DbErr, EntityTrait, Statement};
use serde_json::json;

use crate::db::{execute, insert_returning_id};
use crate::domain::refusal::Refusal;
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
    let now = crate::values::now();
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
             state, abstract, description, duration, content_locale, created, updated) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'en', $10, $10) RETURNING id",
            [
                ev.into(),
                random_from(UNAMBIGUOUS, 6).into(),
                (*title).into(),
                (if i % 4 == 3 { workshop } else { talk }).into(),
                tracks[i % 2].into(),
                (*state).into(),
                format!("A session on {}.", title.to_lowercase()).into(),
                format!(
                    "What {} means in practice, with examples.",
                    title.to_lowercase()
                )
                .into(),
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
    release_program(&txn, ev)
        .await
        .map_err(|e| DbErr::Custom(format!("demo schedule: {e}")))?;
    crate::db::commit(txn).await
}

/// Rooms of the demo conference, with their capacities.
const ROOMS: [(&str, &str, i32); 3] = [
    ("Main hall", "Großer Saal", 400),
    ("Workshop room", "Werkstatt", 40),
    ("Lounge", "Lounge", 80),
];

/// Gives the demo conference rooms and a released schedule: the accepted and confirmed
/// sessions placed one after another from 10:00 on its first day (workshops in the
/// workshop room), released as version 1.0 (the public sees the confirmed ones).
async fn release_program(db: &impl ConnectionTrait, event_id: i64) -> Result<(), Refusal> {
    use crate::domain::talk::access::TalkEvent;
    use crate::domain::talk::schedule::{self, SlotChange};
    let event = crate::db::entities::event::Entity::find_by_id(event_id)
        .one(db)
        .await?
        .ok_or_else(Refusal::internal)?;
    let mut rooms = Vec::new();
    for (i, (en, de, capacity)) in ROOMS.iter().enumerate() {
        rooms.push(
            insert_returning_id(
                db,
                "INSERT INTO talk_rooms (event_id, name, description, capacity, position) \
                 VALUES ($1, $2, $3, $4, $5) RETURNING id",
                [
                    event_id.into(),
                    json!({"en": en, "de": de}).into(),
                    json!({"en": format!("{en} of DemoCon")}).into(),
                    (*capacity).into(),
                    (i as i32).into(),
                ],
            )
            .await?,
        );
    }
    let scheduled = crate::domain::talk::sql::rows(
        db,
        "SELECT id, duration FROM talk_submissions WHERE event_id = $1 \
         AND state IN ('accepted', 'confirmed') ORDER BY created, id",
        vec![event_id.into()],
    )
    .await?;
    for r in &scheduled {
        schedule::sync_submission(db, event_id, r.try_get("", "id")?).await?;
    }
    let ev = TalkEvent::anonymous(event, None, crate::domain::talk::version::CURRENT);
    let wip = schedule::wip(db, event_id).await?;
    let (first_day, _) = schedule::event_days(&ev.event);
    let mut next = [Duration::hours(10), Duration::hours(10)];
    for r in &scheduled {
        let minutes: Option<i32> = r.try_get("", "duration")?;
        let minutes = i64::from(minutes.unwrap_or(30));
        let room = usize::from(minutes > 30);
        for slot in crate::domain::talk::sql::rows(
            db,
            "SELECT id FROM talk_slots WHERE schedule_id = $1 AND submission_id = $2",
            vec![wip.into(), r.try_get::<i64>("", "id")?.into()],
        )
        .await?
        {
            let change = SlotChange {
                room: Some(Some(rooms[room])),
                start: Some(Some(first_day + next[room])),
                ..SlotChange::default()
            };
            schedule::change_slot(db, &ev, slot.try_get("", "id")?, change).await?;
            next[room] += Duration::minutes(minutes + 15);
        }
    }
    schedule::release(db, &ev, "1.0", Some(json!({"en": "The first program."}))).await?;
    Ok(())
}

/// Review texts of the demo conference, one per submitted session, with the value
/// (0 to 3) given in each of its two score categories.
const REVIEWS: [(&str, i64, i64); 3] = [
    ("Clear outline; would fit the main hall.", 3, 2),
    ("Solid, but close to last year's talk.", 2, 1),
    ("A practical topic our attendees ask for.", 3, 3),
];

/// Gives the demo conference two score categories ("Content", weight 2, and "Delivery")
/// with the values 0 to 3, and a review by `reviewer` of each submitted session. Seeded
/// once: an event that already has score categories keeps what it has.
pub async fn seed_reviews(
    db: &DatabaseConnection,
    event_id: i64,
    reviewer: i64,
) -> Result<(), Refusal> {
    use crate::domain::talk::reviews::{self, Scope};
    let txn = crate::db::begin_write(db).await?;
    let seeded = crate::domain::talk::sql::rows(
        &txn,
        "SELECT id FROM talk_score_categories WHERE event_id = $1",
        vec![event_id.into()],
    )
    .await?;
    if !seeded.is_empty() {
        return Ok(());
    }
    let mut values = Vec::new();
    for (name, weight) in [("Content", 200), ("Delivery", 100)] {
        let category = insert_returning_id(
            &txn,
            "INSERT INTO talk_score_categories (event_id, name, weight, required, active, \
             is_independent) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
            [
                event_id.into(),
                json!({"en": name}).into(),
                weight.into(),
                true.into(),
                true.into(),
                false.into(),
            ],
        )
        .await?;
        let mut ids = Vec::new();
        for (value, label) in ["Poor", "Fair", "Good", "Excellent"].iter().enumerate() {
            ids.push(
                insert_returning_id(
                    &txn,
                    "INSERT INTO talk_scores (category_id, value, label) VALUES ($1, $2, $3) \
                     RETURNING id",
                    [
                        category.into(),
                        (value as i64 * 100).into(),
                        (*label).into(),
                    ],
                )
                .await?,
            );
        }
        values.push(ids);
    }
    let submitted = crate::domain::talk::sql::rows(
        &txn,
        "SELECT id FROM talk_submissions WHERE event_id = $1 AND state = 'submitted' \
         ORDER BY created, id",
        vec![event_id.into()],
    )
    .await?;
    let now = crate::values::now();
    for (row, (text, content, delivery)) in submitted.iter().zip(REVIEWS) {
        let review = insert_returning_id(
            &txn,
            "INSERT INTO talk_reviews (event_id, submission_id, user_id, text, created, updated) \
             VALUES ($1, $2, $3, $4, $5, $5) RETURNING id",
            [
                event_id.into(),
                row.try_get::<i64>("", "id")?.into(),
                reviewer.into(),
                text.into(),
                now.into(),
            ],
        )
        .await?;
        for (ids, value) in values.iter().zip([content, delivery]) {
            execute(
                &txn,
                "INSERT INTO talk_review_scores (review_id, score_id) VALUES ($1, $2)",
                [review.into(), ids[value as usize].into()],
            )
            .await?;
        }
    }
    reviews::recompute(&txn, event_id, Scope::Event).await?;
    crate::db::commit(txn).await?;
    Ok(())
}
