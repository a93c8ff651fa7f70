//! The catalogue: the remaining item fields, variations, add-ons, bundles, questions, the
//! quotas' items and flags, quota holds (what the availability engine counts), and uploaded
//! files.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Adds one column per statement (SQLite alters one column at a time).
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
        add_columns(
            m,
            "items",
            vec![
                string_null("internal_name").to_owned(),
                json_binary_null("description").to_owned(),
                boolean("free_price").default(false).to_owned(),
                boolean("admission").default(false).to_owned(),
                string_null("picture").to_owned(),
                json_binary("sales_channels")
                    .default("[\"web\"]")
                    .to_owned(),
                timestamp_with_time_zone_null("available_from").to_owned(),
                timestamp_with_time_zone_null("available_until").to_owned(),
                big_integer_null("hidden_if_available").to_owned(),
                boolean("require_voucher").default(false).to_owned(),
                boolean("hide_without_voucher").default(false).to_owned(),
                boolean("allow_cancel").default(true).to_owned(),
                integer_null("min_per_order").to_owned(),
                integer_null("max_per_order").to_owned(),
                boolean("checkin_attention").default(false).to_owned(),
                big_integer_null("original_price_cents").to_owned(),
                boolean("require_approval").default(false).to_owned(),
                boolean("require_bundling").default(false).to_owned(),
                boolean_null("generate_tickets").to_owned(),
                boolean("allow_waitinglist").default(true).to_owned(),
                boolean("issue_giftcard").default(false).to_owned(),
                boolean_null("show_quota_left").to_owned(),
                boolean("has_variations").default(false).to_owned(),
                json_binary("meta_data").default("{}").to_owned(),
            ],
        )
        .await?;

        m.create_table(
            Table::create()
                .table("item_variations")
                .col(big_pk_auto("id"))
                .col(big_integer("item_id"))
                .col(json_binary("value"))
                .col(big_integer_null("default_price_cents"))
                .col(big_integer_null("original_price_cents"))
                .col(boolean("active").default(true))
                .col(json_binary_null("description"))
                .col(integer("position").default(0))
                .foreign_key(&mut fk("item_variations", "item_id", "items"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "item_variations_item",
            "item_variations",
            &["item_id"],
        ))
        .await?;

        m.create_table(
            Table::create()
                .table("item_addons")
                .col(big_pk_auto("id"))
                .col(big_integer("item_id"))
                .col(big_integer("addon_category_id"))
                .col(integer("min_count").default(0))
                .col(integer("max_count").default(1))
                .col(integer("position").default(0))
                .col(boolean("multi_allowed").default(false))
                .col(boolean("price_included").default(false))
                .foreign_key(&mut fk("item_addons", "item_id", "items"))
                .foreign_key(&mut fk("item_addons", "addon_category_id", "categories"))
                .to_owned(),
        )
        .await?;
        m.create_index(unique_index(
            "item_addons_item_category",
            "item_addons",
            &["item_id", "addon_category_id"],
        ))
        .await?;

        m.create_table(
            Table::create()
                .table("item_bundles")
                .col(big_pk_auto("id"))
                .col(big_integer("item_id"))
                .col(big_integer("bundled_item_id"))
                .col(big_integer_null("bundled_variation_id"))
                .col(integer("count").default(1))
                .col(big_integer("designated_price_cents").default(0))
                .foreign_key(&mut fk("item_bundles", "item_id", "items"))
                .foreign_key(&mut fk("item_bundles", "bundled_item_id", "items"))
                .to_owned(),
        )
        .await?;
        m.create_index(index("item_bundles_item", "item_bundles", &["item_id"]))
            .await?;
        m.create_index(index(
            "item_bundles_bundled_item",
            "item_bundles",
            &["bundled_item_id"],
        ))
        .await?;

        m.create_table(
            Table::create()
                .table("questions")
                .col(big_pk_auto("id"))
                .col(big_integer("event_id"))
                .col(json_binary("question"))
                .col(string_len("type", 5))
                .col(boolean("required").default(false))
                .col(integer("position").default(0))
                .col(boolean("ask_during_checkin").default(false))
                .col(string("identifier"))
                .col(json_binary_null("help_text"))
                .col(boolean("hidden").default(false))
                .col(boolean("print_on_invoice").default(false))
                .col(big_integer_null("dependency_question"))
                .col(json_binary("dependency_values").default("[]"))
                .col(string_len_null("valid_number_min", 40))
                .col(string_len_null("valid_number_max", 40))
                .col(date_null("valid_date_min"))
                .col(date_null("valid_date_max"))
                .col(timestamp_with_time_zone_null("valid_datetime_min"))
                .col(timestamp_with_time_zone_null("valid_datetime_max"))
                .col(integer_null("valid_string_length_max"))
                .foreign_key(&mut fk("questions", "event_id", "events"))
                .to_owned(),
        )
        .await?;
        m.create_index(unique_index(
            "questions_event_identifier",
            "questions",
            &["event_id", "identifier"],
        ))
        .await?;

        m.create_table(
            Table::create()
                .table("question_options")
                .col(big_pk_auto("id"))
                .col(big_integer("question_id"))
                .col(string("identifier"))
                .col(json_binary("answer"))
                .col(integer("position").default(0))
                .foreign_key(&mut fk("question_options", "question_id", "questions"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "question_options_question",
            "question_options",
            &["question_id"],
        ))
        .await?;

        m.create_table(
            Table::create()
                .table("question_items")
                .col(big_integer("question_id"))
                .col(big_integer("item_id"))
                .primary_key(Index::create().col("question_id").col("item_id"))
                .foreign_key(&mut fk("question_items", "question_id", "questions"))
                .foreign_key(&mut fk("question_items", "item_id", "items"))
                .to_owned(),
        )
        .await?;
        m.create_index(index("question_items_item", "question_items", &["item_id"]))
            .await?;

        add_columns(
            m,
            "quotas",
            vec![
                boolean("close_when_sold_out").default(false).to_owned(),
                boolean("closed").default(false).to_owned(),
                boolean("release_after_exit").default(false).to_owned(),
                boolean("ignore_for_event_availability")
                    .default(false)
                    .to_owned(),
            ],
        )
        .await?;
        for (table, col, target) in [
            ("quota_items", "item_id", "items"),
            ("quota_variations", "variation_id", "item_variations"),
        ] {
            m.create_table(
                Table::create()
                    .table(table)
                    .col(big_integer("quota_id"))
                    .col(big_integer(col))
                    .primary_key(Index::create().col("quota_id").col(col))
                    .foreign_key(&mut fk(table, "quota_id", "quotas"))
                    .foreign_key(&mut fk(table, col, target))
                    .to_owned(),
            )
            .await?;
        }
        m.create_index(index("quota_items_item", "quota_items", &["item_id"]))
            .await?;
        m.create_index(index(
            "quota_variations_variation",
            "quota_variations",
            &["variation_id"],
        ))
        .await?;

        // What holds a quota's capacity, summed per kind and expiry: one row per quota, kind
        // and expiry instant (microseconds since the epoch; i64::MAX for "never"), so that a
        // quota's availability is a sum over a handful of rows, and expired holds (carts,
        // pending orders past their term) stop counting the moment they expire.
        m.create_table(
            Table::create()
                .table("quota_holds")
                .col(big_integer("quota_id"))
                .col(string_len("kind", 16))
                .col(big_integer("expires_us"))
                .col(big_integer("count").default(0))
                .primary_key(
                    Index::create()
                        .col("quota_id")
                        .col("kind")
                        .col("expires_us"),
                )
                .foreign_key(&mut fk("quota_holds", "quota_id", "quotas"))
                .to_owned(),
        )
        .await?;

        // The first columns of order positions, so that "has been ordered" can be answered;
        // the selling migration adds the rest.
        m.create_table(
            Table::create()
                .table("order_positions")
                .col(big_pk_auto("id"))
                .col(big_integer("order_id"))
                .col(integer("positionid").default(1))
                .col(big_integer("item_id"))
                .col(big_integer_null("variation_id"))
                .col(big_integer_null("subevent_id"))
                .col(big_integer("price_cents").default(0))
                .foreign_key(&mut fk("order_positions", "order_id", "orders"))
                // Ordered items are never deleted: no cascade from items.
                .foreign_key(
                    ForeignKey::create()
                        .from("order_positions", "item_id")
                        .to("items", "id"),
                )
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "order_positions_order",
            "order_positions",
            &["order_id"],
        ))
        .await?;
        m.create_index(index(
            "order_positions_item",
            "order_positions",
            &["item_id"],
        ))
        .await?;
        m.create_index(index(
            "order_positions_variation",
            "order_positions",
            &["variation_id"],
        ))
        .await?;

        m.create_table(
            Table::create()
                .table("files")
                .col(string_len("id", 64).primary_key())
                .col(string("owner"))
                .col(string("filename"))
                .col(string("content_type"))
                .col(blob("data"))
                .col(timestamp_with_time_zone("created"))
                .col(timestamp_with_time_zone_null("expires"))
                .to_owned(),
        )
        .await?;
        m.create_index(index("files_expires", "files", &["expires"]))
            .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for t in [
            "files",
            "order_positions",
            "quota_holds",
            "quota_variations",
            "quota_items",
            "question_items",
            "question_options",
            "questions",
            "item_bundles",
            "item_addons",
            "item_variations",
        ] {
            m.drop_table(Table::drop().table(t).to_owned()).await?;
        }
        Ok(())
    }
}
