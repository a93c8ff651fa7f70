//! Organizers, teams and their API tokens, a minimal events table that later migrations
//! extend, and gift cards with their ledger. Money is stored as integer cents.

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The permission flags of a team, with pretix's names.
pub const TEAM_PERMISSIONS: [&str; 11] = [
    "can_create_events",
    "can_change_teams",
    "can_change_organizer_settings",
    "can_manage_gift_cards",
    "can_change_event_settings",
    "can_change_items",
    "can_view_orders",
    "can_change_orders",
    "can_checkin_orders",
    "can_view_vouchers",
    "can_change_vouchers",
];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table("organizers")
                .col(big_pk_auto("id"))
                .col(string_uniq("slug"))
                .col(string("name"))
                .col(timestamp_with_time_zone("created"))
                .to_owned(),
        )
        .await?;

        let mut teams = Table::create();
        teams
            .table("teams")
            .col(big_pk_auto("id"))
            .col(big_integer("organizer_id"))
            .col(string("name"))
            .col(boolean("all_events"));
        for p in TEAM_PERMISSIONS {
            teams.col(boolean(p).default(false));
        }
        teams.foreign_key(&mut fk("teams", "organizer_id", "organizers"));
        m.create_table(teams.to_owned()).await?;

        m.create_table(
            Table::create()
                .table("events")
                .col(big_pk_auto("id"))
                .col(big_integer("organizer_id"))
                .col(string("slug"))
                .col(json_binary("name"))
                .col(string("currency"))
                .col(timestamp_with_time_zone("date_from"))
                .foreign_key(&mut fk("events", "organizer_id", "organizers"))
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("events_organizer_slug")
                .table("events")
                .col("organizer_id")
                .col("slug")
                .unique()
                .to_owned(),
        )
        .await?;

        m.create_table(
            Table::create()
                .table("team_events")
                .col(big_integer("team_id"))
                .col(big_integer("event_id"))
                .primary_key(Index::create().col("team_id").col("event_id"))
                .foreign_key(&mut fk("team_events", "team_id", "teams"))
                .foreign_key(&mut fk("team_events", "event_id", "events"))
                .to_owned(),
        )
        .await?;

        m.create_table(
            Table::create()
                .table("team_tokens")
                .col(big_pk_auto("id"))
                .col(big_integer("team_id"))
                .col(string("name"))
                .col(string_uniq("token_hash"))
                .col(boolean("active"))
                .col(timestamp_with_time_zone("created"))
                .foreign_key(&mut fk("team_tokens", "team_id", "teams"))
                .to_owned(),
        )
        .await?;

        m.create_table(
            Table::create()
                .table("giftcard_acceptances")
                .col(big_integer("issuer_id"))
                .col(big_integer("acceptor_id"))
                .primary_key(Index::create().col("issuer_id").col("acceptor_id"))
                .foreign_key(&mut fk("giftcard_acceptances", "issuer_id", "organizers"))
                .foreign_key(&mut fk("giftcard_acceptances", "acceptor_id", "organizers"))
                .to_owned(),
        )
        .await?;

        m.create_table(
            Table::create()
                .table("giftcards")
                .col(big_pk_auto("id"))
                .col(big_integer("issuer_id"))
                .col(string("secret"))
                .col(big_integer("value_cents"))
                .col(string("currency"))
                .col(boolean("testmode"))
                .col(timestamp_with_time_zone_null("expires"))
                .col(text_null("conditions"))
                .col(timestamp_with_time_zone("issuance"))
                .foreign_key(&mut fk("giftcards", "issuer_id", "organizers"))
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("giftcards_issuer_secret")
                .table("giftcards")
                .col("issuer_id")
                .col("secret")
                .unique()
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("giftcards_secret")
                .table("giftcards")
                .col("secret")
                .to_owned(),
        )
        .await?;

        m.create_table(
            Table::create()
                .table("giftcard_transactions")
                .col(big_pk_auto("id"))
                .col(big_integer("card_id"))
                .col(big_integer("acceptor_id"))
                .col(timestamp_with_time_zone("datetime"))
                .col(big_integer("value_cents"))
                .col(big_integer_null("event_id"))
                .col(string_null("order_code"))
                .col(text_null("text"))
                .foreign_key(&mut fk("giftcard_transactions", "card_id", "giftcards"))
                .foreign_key(&mut fk(
                    "giftcard_transactions",
                    "acceptor_id",
                    "organizers",
                ))
                .foreign_key(
                    ForeignKey::create()
                        .from("giftcard_transactions", "event_id")
                        .to("events", "id")
                        .on_delete(ForeignKeyAction::SetNull),
                )
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("giftcard_transactions_card")
                .table("giftcard_transactions")
                .col("card_id")
                .to_owned(),
        )
        .await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        for t in [
            "giftcard_transactions",
            "giftcards",
            "giftcard_acceptances",
            "team_tokens",
            "team_events",
            "events",
            "teams",
            "organizers",
        ] {
            m.drop_table(Table::drop().table(t).to_owned()).await?;
        }
        Ok(())
    }
}
