//! The program of a talk-side event: rooms (with the times they are available), schedules
//! and their slots. Each event has one work-in-progress schedule (version NULL) and any
//! number of released ones, whose version names are unique per event (case-insensitively)
//! and whose slots never change after the release.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

async fn create_rooms(m: &SchemaManager<'_>) -> Result<(), DbErr> {
    m.create_table(
        Table::create()
            .table("talk_rooms")
            .col(big_pk_auto("id"))
            .col(big_integer("event_id"))
            .col(json_binary("name"))
            .col(json_binary_null("description"))
            .col(json_binary_null("speaker_info"))
            // A UUID set by the organisers, for external tools.
            .col(string_len_null("guid", 36))
            .col(integer_null("capacity"))
            .col(integer_null("position"))
            .col(boolean("hidden").default(false))
            .foreign_key(&mut fk("talk_rooms", "event_id", "events"))
            .to_owned(),
    )
    .await?;
    m.create_index(index("talk_rooms_event", "talk_rooms", &["event_id"]))
        .await?;
    m.create_index(unique_index(
        "talk_rooms_event_guid",
        "talk_rooms",
        &["event_id", "guid"],
    ))
    .await?;
    m.create_table(
        Table::create()
            .table("talk_room_availabilities")
            .col(big_pk_auto("id"))
            .col(big_integer("room_id"))
            .col(timestamp_with_time_zone("start"))
            .col(timestamp_with_time_zone("end"))
            .foreign_key(&mut fk("talk_room_availabilities", "room_id", "talk_rooms"))
            .to_owned(),
    )
    .await?;
    m.create_index(index(
        "talk_room_availabilities_room",
        "talk_room_availabilities",
        &["room_id"],
    ))
    .await
}

async fn create_schedules(m: &SchemaManager<'_>) -> Result<(), DbErr> {
    m.create_table(
        Table::create()
            .table("talk_schedules")
            .col(big_pk_auto("id"))
            .col(big_integer("event_id"))
            // NULL for the work in progress.
            .col(string_len_null("version", 190))
            .col(timestamp_with_time_zone_null("published"))
            .col(json_binary_null("comment"))
            .foreign_key(&mut fk("talk_schedules", "event_id", "events"))
            .to_owned(),
    )
    .await?;
    let db = m.get_connection();
    // One work in progress per event, and a version name once per event in any case: two
    // releases racing for one name cannot both commit.
    db.execute_unprepared(
        "CREATE UNIQUE INDEX talk_schedules_wip ON talk_schedules (event_id) \
         WHERE version IS NULL",
    )
    .await?;
    db.execute_unprepared(
        "CREATE UNIQUE INDEX talk_schedules_version ON talk_schedules \
         (event_id, LOWER(version))",
    )
    .await?;
    m.create_table(
        Table::create()
            .table("talk_slots")
            .col(big_pk_auto("id"))
            .col(big_integer("schedule_id"))
            // NULL for a break or a blocker.
            .col(big_integer_null("submission_id"))
            .col(big_integer_null("room_id"))
            .col(timestamp_with_time_zone_null("start"))
            .col(timestamp_with_time_zone_null("end"))
            .col(boolean("is_visible").default(false))
            // `break` or `blocker` for a slot without a submission.
            .col(string_len_null("slot_type", 10))
            .col(json_binary_null("description"))
            .foreign_key(&mut fk("talk_slots", "schedule_id", "talk_schedules"))
            .foreign_key(&mut fk("talk_slots", "submission_id", "talk_submissions"))
            // A room used in a schedule is not deleted (checked at the end of the statement,
            // so deleting the whole event still works).
            .foreign_key(
                ForeignKey::create()
                    .from("talk_slots", "room_id")
                    .to("talk_rooms", "id")
                    .on_delete(ForeignKeyAction::NoAction),
            )
            .to_owned(),
    )
    .await?;
    m.create_index(index(
        "talk_slots_schedule",
        "talk_slots",
        &["schedule_id", "start"],
    ))
    .await?;
    m.create_index(index(
        "talk_slots_submission",
        "talk_slots",
        &["submission_id"],
    ))
    .await?;
    m.create_index(index("talk_slots_room", "talk_slots", &["room_id"]))
        .await
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        create_rooms(m).await?;
        create_schedules(m).await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            "talk_slots",
            "talk_schedules",
            "talk_room_availabilities",
            "talk_rooms",
        ] {
            m.drop_table(Table::drop().table(table).to_owned()).await?;
        }
        Ok(())
    }
}
