//! Invitations to join a team, by e-mail (pretix's `teams/{id}/invites/`). The link mailed
//! carries a token; only its hash is stored. Accepting makes the signed-in user a member and
//! deletes the invitation.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("team_invites")
                .col(big_pk_auto("id"))
                .col(big_integer("team_id"))
                .col(string_len("email", 254))
                .col(string_len("token_hash", 128))
                .col(timestamp_with_time_zone("created"))
                .foreign_key(&mut fk("team_invites", "team_id", "teams"))
                .to_owned(),
        )
        .await?;
        m.create_index(unique_index(
            "team_invites_team_email",
            "team_invites",
            &["team_id", "email"],
        ))
        .await?;
        m.create_index(unique_index(
            "team_invites_token",
            "team_invites",
            &["token_hash"],
        ))
        .await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table("team_invites").to_owned())
            .await
    }
}
