//! The talk side: events that run a call for papers, talk permissions of teams, user API
//! tokens of `/api/`, and the call for papers itself (session types, tracks, tags,
//! questions with their options and answers, speakers, submissions with their speakers,
//! tags and resources), with an activity log per object.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

async fn add_columns(m: &SchemaManager<'_>) -> Result<(), DbErr> {
    m.alter_table(
        Table::alter()
            .table("events")
            .add_column(boolean("talk_enabled").default(false))
            .to_owned(),
    )
    .await?;
    // Talk-side events are addressed by slug alone (`/api/events/{slug}/`).
    m.get_connection()
        .execute_unprepared(
            "CREATE UNIQUE INDEX events_talk_slug ON events (slug) WHERE talk_enabled",
        )
        .await?;
    // Users are named by an opaque code on the talk side (activity logs, speakers).
    m.alter_table(
        Table::alter()
            .table("users")
            .add_column(string_len("code", 16).default(""))
            .to_owned(),
    )
    .await?;
    m.get_connection()
        .execute_unprepared("UPDATE users SET code = 'U' || CAST(id AS TEXT)")
        .await?;
    m.create_index(unique_index("users_code", "users", &["code"]))
        .await?;
    for column in [
        "can_change_submissions",
        "is_reviewer",
        "force_hide_speaker_names",
    ] {
        m.alter_table(
            Table::alter()
                .table("teams")
                .add_column(boolean(column).default(false))
                .to_owned(),
        )
        .await?;
    }
    Ok(())
}

async fn create_tokens(m: &SchemaManager<'_>) -> Result<(), DbErr> {
    m.create_table(
        Table::create()
            .table("user_api_tokens")
            .col(big_pk_auto("id"))
            .col(big_integer("user_id"))
            .col(string_len("name", 190))
            .col(string_uniq("token_hash"))
            .col(boolean("all_events").default(true))
            // `{endpoint: [action, ...]}`.
            .col(json_binary("endpoints"))
            .col(string_len_null("version", 16))
            .col(timestamp_with_time_zone_null("expires"))
            .col(timestamp_with_time_zone_null("last_used"))
            .col(timestamp_with_time_zone("created"))
            .foreign_key(&mut fk("user_api_tokens", "user_id", "users"))
            .to_owned(),
    )
    .await?;
    m.create_index(index(
        "user_api_tokens_user",
        "user_api_tokens",
        &["user_id"],
    ))
    .await?;
    m.create_index(index(
        "user_api_tokens_expires",
        "user_api_tokens",
        &["expires"],
    ))
    .await?;
    link_table(
        m,
        "user_api_token_events",
        "token_id",
        "user_api_tokens",
        "event_id",
        "events",
        "user_api_token_events_event",
    )
    .await
}

/// A table linking two others, keyed by both references, deleted along with either.
async fn link_table(
    m: &SchemaManager<'_>,
    table: &'static str,
    left: &'static str,
    left_table: &'static str,
    right: &'static str,
    right_table: &'static str,
    right_index: &'static str,
) -> Result<(), DbErr> {
    m.create_table(
        Table::create()
            .table(table)
            .col(big_integer(left))
            .col(big_integer(right))
            .primary_key(Index::create().col(left).col(right))
            .foreign_key(&mut fk(table, left, left_table))
            .foreign_key(&mut fk(table, right, right_table))
            .to_owned(),
    )
    .await?;
    m.create_index(index(right_index, table, &[right])).await
}

async fn create_cfp_parts(m: &SchemaManager<'_>) -> Result<(), DbErr> {
    m.create_table(
        Table::create()
            .table("talk_submission_types")
            .col(big_pk_auto("id"))
            .col(big_integer("event_id"))
            .col(json_binary("name"))
            .col(integer("default_duration").default(30))
            .col(timestamp_with_time_zone_null("deadline"))
            .col(boolean("requires_access_code").default(false))
            .col(boolean("attendee_signup_required").default(false))
            .foreign_key(&mut fk("talk_submission_types", "event_id", "events"))
            .to_owned(),
    )
    .await?;
    m.create_index(index(
        "talk_submission_types_event",
        "talk_submission_types",
        &["event_id"],
    ))
    .await?;
    m.create_table(
        Table::create()
            .table("talk_tracks")
            .col(big_pk_auto("id"))
            .col(big_integer("event_id"))
            .col(json_binary("name"))
            .col(json_binary_null("description"))
            .col(string_len("color", 7).default("#000000"))
            .col(integer("position").default(0))
            .col(boolean("requires_access_code").default(false))
            .col(boolean("attendee_signup_required").default(false))
            .foreign_key(&mut fk("talk_tracks", "event_id", "events"))
            .to_owned(),
    )
    .await?;
    m.create_index(index("talk_tracks_event", "talk_tracks", &["event_id"]))
        .await?;
    m.create_table(
        Table::create()
            .table("talk_tags")
            .col(big_pk_auto("id"))
            .col(big_integer("event_id"))
            .col(string_len("tag", 50))
            .col(json_binary_null("description"))
            .col(string_len("color", 7).default("#000000"))
            .col(boolean("is_public").default(false))
            .foreign_key(&mut fk("talk_tags", "event_id", "events"))
            .to_owned(),
    )
    .await?;
    m.create_index(unique_index(
        "talk_tags_event_tag",
        "talk_tags",
        &["event_id", "tag"],
    ))
    .await?;
    // Reviewers of a team limited to some tracks.
    link_table(
        m,
        "team_tracks",
        "team_id",
        "teams",
        "track_id",
        "talk_tracks",
        "team_tracks_track",
    )
    .await
}

async fn create_speakers_and_submissions(m: &SchemaManager<'_>) -> Result<(), DbErr> {
    m.create_table(
        Table::create()
            .table("talk_speakers")
            .col(big_pk_auto("id"))
            .col(big_integer("event_id"))
            // `None` for a managed speaker without an account.
            .col(big_integer_null("user_id"))
            .col(string_len("code", 16))
            .col(string_len("name", 255))
            .col(string_len_null("email", 254))
            .col(string_len("locale", 32).default("en"))
            .col(string_len("timezone", 100).default("UTC"))
            .col(text_null("biography"))
            .col(boolean("has_arrived").default(false))
            .col(text_null("internal_notes"))
            // The stored file's key.
            .col(string_len_null("avatar", 64))
            .col(timestamp_with_time_zone("created"))
            .col(timestamp_with_time_zone("updated"))
            .foreign_key(&mut fk("talk_speakers", "event_id", "events"))
            .foreign_key(&mut fk_set_null("talk_speakers", "user_id", "users"))
            .to_owned(),
    )
    .await?;
    m.create_index(unique_index(
        "talk_speakers_event_code",
        "talk_speakers",
        &["event_id", "code"],
    ))
    .await?;
    m.create_table(
        Table::create()
            .table("talk_availabilities")
            .col(big_pk_auto("id"))
            .col(big_integer("speaker_id"))
            .col(timestamp_with_time_zone("start"))
            .col(timestamp_with_time_zone("end"))
            .foreign_key(&mut fk(
                "talk_availabilities",
                "speaker_id",
                "talk_speakers",
            ))
            .to_owned(),
    )
    .await?;
    m.create_index(index(
        "talk_availabilities_speaker",
        "talk_availabilities",
        &["speaker_id"],
    ))
    .await?;
    m.create_table(
        Table::create()
            .table("talk_submissions")
            .col(big_pk_auto("id"))
            .col(big_integer("event_id"))
            // Upper-case; looked up case-insensitively.
            .col(string_len_uniq("code", 16))
            .col(string_len("title", 1000))
            .col(big_integer("submission_type_id"))
            .col(big_integer_null("track_id"))
            .col(string_len("state", 16).default("submitted"))
            .col(string_len_null("pending_state", 16))
            .col(text_null("abstract"))
            .col(text_null("description"))
            .col(text_null("notes"))
            .col(text_null("internal_notes"))
            .col(integer_null("duration"))
            .col(integer("slot_count").default(1))
            .col(boolean("attendee_signup_required").default(false))
            .col(integer_null("attendee_signup_capacity"))
            .col(string_len("content_locale", 32).default("en"))
            .col(boolean("is_featured").default(false))
            .col(boolean("do_not_record").default(false))
            .col(string_len_null("image", 64))
            .col(string_len_null("review_code", 32))
            .col(json_binary_null("anonymised"))
            .col(timestamp_with_time_zone("created"))
            .col(timestamp_with_time_zone("updated"))
            .foreign_key(&mut fk("talk_submissions", "event_id", "events"))
            .foreign_key(
                ForeignKey::create()
                    .from("talk_submissions", "submission_type_id")
                    .to("talk_submission_types", "id")
                    .on_delete(ForeignKeyAction::Restrict),
            )
            .foreign_key(&mut fk_set_null(
                "talk_submissions",
                "track_id",
                "talk_tracks",
            ))
            .to_owned(),
    )
    .await?;
    m.create_index(index(
        "talk_submissions_event",
        "talk_submissions",
        &["event_id", "state"],
    ))
    .await?;
    m.create_table(
        Table::create()
            .table("talk_submission_speakers")
            .col(big_integer("submission_id"))
            .col(big_integer("speaker_id"))
            .col(integer("position").default(0))
            .primary_key(Index::create().col("submission_id").col("speaker_id"))
            .foreign_key(&mut fk(
                "talk_submission_speakers",
                "submission_id",
                "talk_submissions",
            ))
            .foreign_key(&mut fk(
                "talk_submission_speakers",
                "speaker_id",
                "talk_speakers",
            ))
            .to_owned(),
    )
    .await?;
    m.create_index(index(
        "talk_submission_speakers_speaker",
        "talk_submission_speakers",
        &["speaker_id"],
    ))
    .await?;
    link_table(
        m,
        "talk_submission_tags",
        "submission_id",
        "talk_submissions",
        "tag_id",
        "talk_tags",
        "talk_submission_tags_tag",
    )
    .await?;
    m.create_table(
        Table::create()
            .table("talk_resources")
            .col(big_pk_auto("id"))
            .col(big_integer("submission_id"))
            // The stored file's key, or `None` for a link.
            .col(string_len_null("resource", 64))
            .col(string_len_null("link", 400))
            .col(string_len("description", 1000).default(""))
            .col(boolean("is_public").default(true))
            .foreign_key(&mut fk(
                "talk_resources",
                "submission_id",
                "talk_submissions",
            ))
            .to_owned(),
    )
    .await?;
    m.create_index(index(
        "talk_resources_submission",
        "talk_resources",
        &["submission_id"],
    ))
    .await
}

async fn create_questions(m: &SchemaManager<'_>) -> Result<(), DbErr> {
    m.create_table(
        Table::create()
            .table("talk_questions")
            .col(big_pk_auto("id"))
            .col(big_integer("event_id"))
            .col(string_len("identifier", 190))
            .col(json_binary("question"))
            .col(json_binary_null("help_text"))
            .col(text_null("default_answer"))
            .col(string_len("variant", 16).default("string"))
            .col(string_len("target", 16).default("submission"))
            .col(timestamp_with_time_zone_null("deadline"))
            .col(timestamp_with_time_zone_null("freeze_after"))
            .col(string_len("question_required", 16).default("optional"))
            .col(integer("position").default(0))
            .col(boolean("active").default(true))
            .col(boolean("is_public").default(false))
            .col(boolean("contains_personal_data").default(true))
            .col(boolean("is_visible_to_reviewers").default(true))
            .col(integer_null("min_length"))
            .col(integer_null("max_length"))
            // Decimals as text, read with rust_decimal.
            .col(string_len_null("min_number", 40))
            .col(string_len_null("max_number", 40))
            .col(integer_null("min_options"))
            .col(integer_null("max_options"))
            .col(date_null("min_date"))
            .col(date_null("max_date"))
            .col(timestamp_with_time_zone_null("min_datetime"))
            .col(timestamp_with_time_zone_null("max_datetime"))
            .col(string_len_null("icon", 32))
            .foreign_key(&mut fk("talk_questions", "event_id", "events"))
            .to_owned(),
    )
    .await?;
    m.create_index(unique_index(
        "talk_questions_event_identifier",
        "talk_questions",
        &["event_id", "identifier"],
    ))
    .await?;
    link_table(
        m,
        "talk_question_tracks",
        "question_id",
        "talk_questions",
        "track_id",
        "talk_tracks",
        "talk_question_tracks_track",
    )
    .await?;
    link_table(
        m,
        "talk_question_types",
        "question_id",
        "talk_questions",
        "submission_type_id",
        "talk_submission_types",
        "talk_question_types_type",
    )
    .await?;
    m.create_table(
        Table::create()
            .table("talk_question_options")
            .col(big_pk_auto("id"))
            .col(big_integer("question_id"))
            .col(json_binary("answer"))
            .col(integer("position").default(0))
            .col(string_len("identifier", 190))
            .foreign_key(&mut fk(
                "talk_question_options",
                "question_id",
                "talk_questions",
            ))
            .to_owned(),
    )
    .await?;
    m.create_index(unique_index(
        "talk_question_options_identifier",
        "talk_question_options",
        &["question_id", "identifier"],
    ))
    .await?;
    m.create_table(
        Table::create()
            .table("talk_answers")
            .col(big_pk_auto("id"))
            .col(big_integer("question_id"))
            .col(big_integer_null("submission_id"))
            .col(big_integer_null("speaker_id"))
            // Reviews arrive with the program; the column waits for them.
            .col(big_integer_null("review_id"))
            .col(text("answer").default(""))
            .col(string_len_null("answer_file", 64))
            .foreign_key(&mut fk("talk_answers", "question_id", "talk_questions"))
            .foreign_key(&mut fk("talk_answers", "submission_id", "talk_submissions"))
            .foreign_key(&mut fk("talk_answers", "speaker_id", "talk_speakers"))
            .to_owned(),
    )
    .await?;
    m.create_index(index(
        "talk_answers_question",
        "talk_answers",
        &["question_id", "submission_id", "speaker_id"],
    ))
    .await?;
    m.create_index(index(
        "talk_answers_submission",
        "talk_answers",
        &["submission_id"],
    ))
    .await?;
    m.create_index(index(
        "talk_answers_speaker",
        "talk_answers",
        &["speaker_id"],
    ))
    .await?;
    link_table(
        m,
        "talk_answer_options",
        "answer_id",
        "talk_answers",
        "option_id",
        "talk_question_options",
        "talk_answer_options_option",
    )
    .await
}

async fn create_log(m: &SchemaManager<'_>) -> Result<(), DbErr> {
    m.create_table(
        Table::create()
            .table("talk_log")
            .col(big_pk_auto("id"))
            .col(big_integer("event_id"))
            // `submission`, `speaker`, `question`, ... and the object's ID.
            .col(string_len("object_type", 32))
            .col(big_integer("object_id"))
            .col(big_integer_null("user_id"))
            .col(timestamp_with_time_zone("timestamp"))
            .col(string_len("action_type", 200))
            .col(json_binary("data"))
            .col(boolean("is_orga_action").default(false))
            .foreign_key(&mut fk("talk_log", "event_id", "events"))
            .foreign_key(&mut fk_set_null("talk_log", "user_id", "users"))
            .to_owned(),
    )
    .await?;
    m.create_index(index(
        "talk_log_object",
        "talk_log",
        &["event_id", "object_type", "object_id"],
    ))
    .await
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        add_columns(m).await?;
        create_tokens(m).await?;
        create_cfp_parts(m).await?;
        create_speakers_and_submissions(m).await?;
        create_questions(m).await?;
        create_log(m).await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            "talk_log",
            "talk_answer_options",
            "talk_answers",
            "talk_question_options",
            "talk_question_types",
            "talk_question_tracks",
            "talk_questions",
            "talk_resources",
            "talk_submission_tags",
            "talk_submission_speakers",
            "talk_submissions",
            "talk_availabilities",
            "talk_speakers",
            "team_tracks",
            "talk_tags",
            "talk_tracks",
            "talk_submission_types",
            "user_api_token_events",
            "user_api_tokens",
        ] {
            m.drop_table(Table::drop().table(table).to_owned()).await?;
        }
        m.get_connection()
            .execute_unprepared("DROP INDEX events_talk_slug")
            .await?;
        m.drop_index(Index::drop().name("users_code").table("users").to_owned())
            .await?;
        m.alter_table(Table::alter().table("users").drop_column("code").to_owned())
            .await?;
        for column in [
            "can_change_submissions",
            "is_reviewer",
            "force_hide_speaker_names",
        ] {
            m.alter_table(Table::alter().table("teams").drop_column(column).to_owned())
                .await?;
        }
        m.alter_table(
            Table::alter()
                .table("events")
                .drop_column("talk_enabled")
                .to_owned(),
        )
        .await
    }
}
