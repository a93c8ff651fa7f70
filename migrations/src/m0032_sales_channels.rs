//! Sales channels as pretix's organizer resource (`saleschannels/`): every organizer has the
//! built-in `web` and `resellers` channels, and may add its own (`api.*`) for orders placed
//! through the API. Items, events and orders name channels by identifier.

use sea_orm_migration::sea_orm::ConnectionTrait;
use sea_orm_migration::{prelude::*, schema::*};
use serde_json::json;

use crate::m0010_config_changes::{unwatch, watch};
use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The built-in channels every organizer has: identifier (= type) and English label.
pub const BUILT_IN: [(&str, &str); 2] = [("web", "Online shop"), ("resellers", "Resellers")];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("sales_channels")
                .col(big_pk_auto("id"))
                .col(big_integer("organizer_id"))
                .col(string_len("identifier", 200))
                .col(string_len("type", 200))
                .col(json_binary("label"))
                .col(integer("position").default(0))
                .foreign_key(&mut fk("sales_channels", "organizer_id", "organizers"))
                .to_owned(),
        )
        .await?;
        m.create_index(unique_index(
            "sales_channels_organizer_identifier",
            "sales_channels",
            &["organizer_id", "identifier"],
        ))
        .await?;
        let db = m.get_connection();
        let organizers = db
            .query_all(Query::select().column("id").from("organizers"))
            .await?;
        for row in organizers {
            let id: i64 = row.try_get("", "id")?;
            for (identifier, label) in BUILT_IN {
                db.execute(
                    Query::insert()
                        .into_table("sales_channels")
                        .columns(["organizer_id", "identifier", "type", "label", "position"])
                        .values_panic([
                            id.into(),
                            identifier.into(),
                            identifier.into(),
                            json!({"en": label}).into(),
                            0.into(),
                        ]),
                )
                .await?;
            }
        }
        watch(db, &["sales_channels"]).await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        unwatch(m.get_connection(), &["sales_channels"]).await?;
        m.drop_table(Table::drop().table("sales_channels").to_owned())
            .await
    }
}
