//! Check-in: lists of what admits whom (`checkin_lists`, with the products and gates they are
//! limited to) and every scan on them (`checkins`), successful or not; positions gain a
//! validity window and the parent an add-on belongs to, which redeem checks.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

async fn add_columns(
    m: &SchemaManager<'_>,
    table: &'static str,
    cols: Vec<ColumnDef>,
) -> Result<(), DbErr> {
    for mut col in cols {
        m.alter_table(Table::alter().table(table).add_column(&mut col).to_owned())
            .await?;
    }
    Ok(())
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("checkin_lists")
                .col(big_pk_auto("id"))
                .col(big_integer("event_id"))
                .col(string_len("name", 190))
                .col(boolean("all_products").default(true))
                .col(big_integer_null("subevent_id"))
                .col(boolean("include_pending").default(false))
                .col(boolean("allow_multiple_entries").default(false))
                .col(boolean("allow_entry_after_exit").default(true))
                .col(json_binary("rules").default("{}"))
                .col(timestamp_with_time_zone_null("exit_all_at"))
                .col(boolean("addon_match").default(false))
                .foreign_key(&mut fk("checkin_lists", "event_id", "events"))
                .foreign_key(&mut fk("checkin_lists", "subevent_id", "subevents"))
                .to_owned(),
        )
        .await?;
        m.create_index(index("checkin_lists_event", "checkin_lists", &["event_id"]))
            .await?;
        m.create_table(
            Table::create()
                .table("checkinlist_items")
                .col(big_integer("list_id"))
                .col(big_integer("item_id"))
                .primary_key(Index::create().col("list_id").col("item_id"))
                .foreign_key(&mut fk("checkinlist_items", "list_id", "checkin_lists"))
                .foreign_key(&mut fk("checkinlist_items", "item_id", "items"))
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table("checkinlist_gates")
                .col(big_integer("list_id"))
                .col(big_integer("gate_id"))
                .primary_key(Index::create().col("list_id").col("gate_id"))
                .foreign_key(&mut fk("checkinlist_gates", "list_id", "checkin_lists"))
                .foreign_key(&mut fk("checkinlist_gates", "gate_id", "gates"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "checkinlist_gates_gate",
            "checkinlist_gates",
            &["gate_id"],
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("checkins")
                .col(big_pk_auto("id"))
                .col(big_integer("list_id"))
                .col(big_integer_null("position_id"))
                .col(boolean("successful"))
                .col(string_len("type", 10))
                .col(timestamp_with_time_zone("datetime"))
                .col(timestamp_with_time_zone("created"))
                .col(string_len_null("nonce", 190))
                .col(boolean("forced").default(false))
                .col(string_len_null("error_reason", 40))
                .col(text_null("error_explanation"))
                .col(text_null("raw_barcode"))
                .col(big_integer_null("raw_item"))
                .col(big_integer_null("raw_variation"))
                .col(big_integer_null("raw_subevent"))
                .col(big_integer_null("gate_id"))
                .col(big_integer_null("device_id"))
                .col(boolean("auto_checked_in").default(false))
                .foreign_key(&mut fk("checkins", "list_id", "checkin_lists"))
                .foreign_key(&mut fk("checkins", "position_id", "order_positions"))
                .foreign_key(&mut fk_set_null("checkins", "gate_id", "gates"))
                .foreign_key(&mut fk_set_null("checkins", "device_id", "devices"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "checkins_list_position",
            "checkins",
            &["list_id", "position_id"],
        ))
        .await?;
        m.create_index(index("checkins_position", "checkins", &["position_id"]))
            .await?;
        m.create_index(index(
            "checkins_list_datetime",
            "checkins",
            &["list_id", "datetime"],
        ))
        .await?;
        add_columns(
            m,
            "order_positions",
            vec![
                timestamp_with_time_zone_null("valid_from").to_owned(),
                timestamp_with_time_zone_null("valid_until").to_owned(),
                big_integer_null("addon_to_id").to_owned(),
            ],
        )
        .await?;
        m.create_index(index(
            "order_positions_addon_to",
            "order_positions",
            &["addon_to_id"],
        ))
        .await?;
        m.create_index(index(
            "order_positions_secret",
            "order_positions",
            &["secret"],
        ))
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for t in [
            "checkins",
            "checkinlist_gates",
            "checkinlist_items",
            "checkin_lists",
        ] {
            m.drop_table(Table::drop().table(t).to_owned()).await?;
        }
        Ok(())
    }
}
