//! Seats per date of an event series, as pretix's: each date has its own seating plan,
//! category mapping and seats, so the same seat of a plan is sold once per date.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// One seat per identifier and place: the event itself (no date, stored as 0) or one date.
/// An expression index, as both databases support, since a plain unique index would let
/// any number of event-level seats share an identifier (NULLs differ from each other).
const UNIQUE_SEAT: &str = "CREATE UNIQUE INDEX seats_place_guid \
     ON seats (event_id, (COALESCE(subevent_id, 0)), seat_guid)";

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table("seats")
                .add_column(big_integer_null("subevent_id"))
                .to_owned(),
        )
        .await?;
        m.drop_index(
            Index::drop()
                .name("seats_event_guid")
                .table("seats")
                .to_owned(),
        )
        .await?;
        m.get_connection().execute_unprepared(UNIQUE_SEAT).await?;
        m.create_index(index("seats_subevent", "seats", &["subevent_id"]))
            .await?;
        for col in [
            big_integer_null("seating_plan_id"),
            json_binary("seat_category_mapping")
                .default("{}")
                .to_owned(),
        ] {
            let mut col = col;
            m.alter_table(
                Table::alter()
                    .table("subevents")
                    .add_column(&mut col)
                    .to_owned(),
            )
            .await?;
        }
        // "Is this plan used by any date?" is asked on every change of a plan.
        m.create_index(index(
            "subevents_seating_plan",
            "subevents",
            &["seating_plan_id"],
        ))
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_index(
            Index::drop()
                .name("subevents_seating_plan")
                .table("subevents")
                .to_owned(),
        )
        .await?;
        for col in ["seat_category_mapping", "seating_plan_id"] {
            m.alter_table(
                Table::alter()
                    .table("subevents")
                    .drop_column(col)
                    .to_owned(),
            )
            .await?;
        }
        m.get_connection()
            .execute_unprepared("DELETE FROM seats WHERE subevent_id IS NOT NULL")
            .await?;
        m.drop_index(
            Index::drop()
                .name("seats_subevent")
                .table("seats")
                .to_owned(),
        )
        .await?;
        m.drop_index(
            Index::drop()
                .name("seats_place_guid")
                .table("seats")
                .to_owned(),
        )
        .await?;
        m.alter_table(
            Table::alter()
                .table("seats")
                .drop_column("subevent_id")
                .to_owned(),
        )
        .await?;
        m.create_index(unique_index(
            "seats_event_guid",
            "seats",
            &["event_id", "seat_guid"],
        ))
        .await
    }
}
