//! Reviews of a talk-side event: score categories (each with the values a review may give
//! and, optionally, the tracks it applies to), reviews (one per reviewer and submission)
//! with the values they give, and review phases, of which at most one per event is active.
//! Decimals (score values, weights, a review's score) are kept exactly in hundredths.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

async fn create_categories(m: &SchemaManager<'_>) -> Result<(), DbErr> {
    m.create_table(
        Table::create()
            .table("talk_score_categories")
            .col(big_pk_auto("id"))
            .col(big_integer("event_id"))
            .col(json_binary("name"))
            // Hundredths: 100 is a weight of 1.0.
            .col(big_integer("weight").default(100))
            .col(boolean("required").default(false))
            .col(boolean("active").default(true))
            .col(boolean("is_independent").default(false))
            .foreign_key(&mut fk("talk_score_categories", "event_id", "events"))
            .to_owned(),
    )
    .await?;
    m.create_index(index(
        "talk_score_categories_event",
        "talk_score_categories",
        &["event_id"],
    ))
    .await?;
    m.create_table(
        Table::create()
            .table("talk_score_category_tracks")
            .col(big_integer("category_id"))
            .col(big_integer("track_id"))
            .primary_key(Index::create().col("category_id").col("track_id"))
            .foreign_key(&mut fk(
                "talk_score_category_tracks",
                "category_id",
                "talk_score_categories",
            ))
            .foreign_key(&mut fk(
                "talk_score_category_tracks",
                "track_id",
                "talk_tracks",
            ))
            .to_owned(),
    )
    .await?;
    m.create_index(index(
        "talk_score_category_tracks_track",
        "talk_score_category_tracks",
        &["track_id"],
    ))
    .await?;
    // The values a review may give in a category, as pretalx's ReviewScore.
    m.create_table(
        Table::create()
            .table("talk_scores")
            .col(big_pk_auto("id"))
            .col(big_integer("category_id"))
            // Hundredths.
            .col(big_integer("value"))
            .col(string_len_null("label", 200))
            .foreign_key(&mut fk(
                "talk_scores",
                "category_id",
                "talk_score_categories",
            ))
            .to_owned(),
    )
    .await?;
    // Values are unique per category by the writes' checks (a change may swap two).
    m.create_index(index(
        "talk_scores_category",
        "talk_scores",
        &["category_id"],
    ))
    .await
}

async fn create_reviews(m: &SchemaManager<'_>) -> Result<(), DbErr> {
    m.create_table(
        Table::create()
            .table("talk_reviews")
            .col(big_pk_auto("id"))
            .col(big_integer("event_id"))
            .col(big_integer("submission_id"))
            .col(big_integer("user_id"))
            .col(text_null("text"))
            // Hundredths; NULL while the review gives no score.
            .col(big_integer_null("score"))
            .col(timestamp_with_time_zone("created"))
            .col(timestamp_with_time_zone("updated"))
            .foreign_key(&mut fk("talk_reviews", "event_id", "events"))
            .foreign_key(&mut fk("talk_reviews", "submission_id", "talk_submissions"))
            .foreign_key(&mut fk("talk_reviews", "user_id", "users"))
            .to_owned(),
    )
    .await?;
    // One review per reviewer and submission: two creations racing cannot both commit.
    m.create_index(unique_index(
        "talk_reviews_user_submission",
        "talk_reviews",
        &["user_id", "submission_id"],
    ))
    .await?;
    m.create_index(index(
        "talk_reviews_submission",
        "talk_reviews",
        &["submission_id"],
    ))
    .await?;
    m.create_index(index("talk_reviews_event", "talk_reviews", &["event_id"]))
        .await?;
    m.create_table(
        Table::create()
            .table("talk_review_scores")
            .col(big_integer("review_id"))
            .col(big_integer("score_id"))
            .primary_key(Index::create().col("review_id").col("score_id"))
            .foreign_key(&mut fk("talk_review_scores", "review_id", "talk_reviews"))
            .foreign_key(&mut fk("talk_review_scores", "score_id", "talk_scores"))
            .to_owned(),
    )
    .await?;
    m.create_index(index(
        "talk_review_scores_score",
        "talk_review_scores",
        &["score_id"],
    ))
    .await
}

async fn create_phases(m: &SchemaManager<'_>) -> Result<(), DbErr> {
    m.create_table(
        Table::create()
            .table("talk_review_phases")
            .col(big_pk_auto("id"))
            .col(big_integer("event_id"))
            .col(string_len("name", 100))
            .col(timestamp_with_time_zone_null("start"))
            .col(timestamp_with_time_zone_null("end"))
            .col(boolean("is_active").default(false))
            .col(boolean("can_review").default(true))
            // `always`, `never` or `after_review`.
            .col(string_len("can_see_other_reviews", 12).default("after_review"))
            .col(boolean("can_see_speaker_names").default(true))
            .col(boolean("can_see_reviewer_names").default(true))
            .col(boolean("can_change_submission_state").default(false))
            .foreign_key(&mut fk("talk_review_phases", "event_id", "events"))
            .to_owned(),
    )
    .await?;
    m.create_index(index(
        "talk_review_phases_event",
        "talk_review_phases",
        &["event_id"],
    ))
    .await?;
    // At most one active phase per event, whatever writes race.
    m.get_connection()
        .execute_unprepared(
            "CREATE UNIQUE INDEX talk_review_phases_active ON talk_review_phases (event_id) \
             WHERE is_active",
        )
        .await?;
    Ok(())
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        create_categories(m).await?;
        create_reviews(m).await?;
        create_phases(m).await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            "talk_review_phases",
            "talk_review_scores",
            "talk_reviews",
            "talk_scores",
            "talk_score_category_tracks",
            "talk_score_categories",
        ] {
            m.drop_table(Table::drop().table(table).to_owned()).await?;
        }
        Ok(())
    }
}
