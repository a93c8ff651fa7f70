//! Layouts of PDF tickets and badges, as pretix's ticket output and badge plugins keep
//! them: a name, whether it is the event's default, the layout's areas, a background PDF
//! (an uploaded file) and, without one, a page size; and which layout prints which product
//! in which sales channel. `version` grows with each change, so that a layout prepared for
//! rendering is known to be current.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("pdf_layouts")
                .col(big_pk_auto("id"))
                .col(big_integer("event_id"))
                .col(string_len("kind", 16))
                .col(string_len("name", 190))
                .col(boolean("is_default").default(false))
                .col(json_binary("layout"))
                .col(string_len_null("background", 300))
                .col(double("width_mm"))
                .col(double("height_mm"))
                .col(big_integer("version").default(1))
                .foreign_key(&mut fk("pdf_layouts", "event_id", "events"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "pdf_layouts_event",
            "pdf_layouts",
            &["event_id", "kind"],
        ))
        .await?;
        m.create_table(
            Table::create()
                .table("pdf_layout_items")
                .col(big_pk_auto("id"))
                .col(big_integer("layout_id"))
                .col(big_integer("item_id"))
                .col(string_len("sales_channel", 190))
                .foreign_key(&mut fk("pdf_layout_items", "layout_id", "pdf_layouts"))
                .foreign_key(&mut fk("pdf_layout_items", "item_id", "items"))
                .to_owned(),
        )
        .await?;
        m.create_index(index(
            "pdf_layout_items_item",
            "pdf_layout_items",
            &["item_id", "sales_channel"],
        ))
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("pdf_layout_items").to_owned())
            .await?;
        m.drop_table(Table::drop().table("pdf_layouts").to_owned())
            .await
    }
}
