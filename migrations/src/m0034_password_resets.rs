//! Password resets by e-mail: the link mailed carries a token, of which only the hash is
//! kept; it works once, for an hour.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("password_resets")
                .col(big_pk_auto("id"))
                .col(big_integer("user_id"))
                .col(string_len("token_hash", 128))
                .col(timestamp_with_time_zone("created"))
                .col(timestamp_with_time_zone("expires"))
                .col(timestamp_with_time_zone_null("used"))
                .foreign_key(&mut fk("password_resets", "user_id", "users"))
                .to_owned(),
        )
        .await?;
        m.create_index(unique_index(
            "password_resets_token",
            "password_resets",
            &["token_hash"],
        ))
        .await?;
        // How many links a user was sent lately is asked on every request.
        m.create_index(index(
            "password_resets_user",
            "password_resets",
            &["user_id", "created"],
        ))
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("password_resets").to_owned())
            .await
    }
}
