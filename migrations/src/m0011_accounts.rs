//! People and what they sign in with: users (members of teams), browser sessions, failed
//! logins (for slowing down guessing), OAuth applications with their authorizations, codes
//! and tokens, and reseller accounts that create organizers. Every secret is stored as a
//! SHA-256 digest (passwords as argon2id hashes).

use sea_orm_migration::{prelude::*, schema::*};

use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

async fn create_users(m: &SchemaManager<'_>) -> Result<(), DbErr> {
    m.create_table(
        Table::create()
            .table("users")
            .col(big_pk_auto("id"))
            // Stored lower-cased: emails compare case-insensitively.
            .col(string_len_uniq("email", 254))
            .col(string("password_hash"))
            .col(string_len("fullname", 255).default(""))
            .col(string_len("locale", 50).default("en"))
            .col(string_len("timezone", 100).default("UTC"))
            .col(boolean("is_staff").default(false))
            .col(boolean("active").default(true))
            .col(timestamp_with_time_zone("created"))
            .to_owned(),
    )
    .await?;
    m.create_table(
        Table::create()
            .table("team_members")
            .col(big_integer("team_id"))
            .col(big_integer("user_id"))
            .primary_key(Index::create().col("team_id").col("user_id"))
            .foreign_key(&mut fk("team_members", "team_id", "teams"))
            .foreign_key(&mut fk("team_members", "user_id", "users"))
            .to_owned(),
    )
    .await?;
    m.create_index(index("team_members_user", "team_members", &["user_id"]))
        .await
}

async fn create_sessions(m: &SchemaManager<'_>) -> Result<(), DbErr> {
    m.create_table(
        Table::create()
            .table("sessions")
            .col(big_pk_auto("id"))
            .col(string_uniq("key_hash"))
            .col(big_integer("user_id"))
            .col(string("csrf_token"))
            .col(timestamp_with_time_zone("created"))
            .col(timestamp_with_time_zone("expires"))
            .foreign_key(&mut fk("sessions", "user_id", "users"))
            .to_owned(),
    )
    .await?;
    m.create_index(index("sessions_expires", "sessions", &["expires"]))
        .await?;
    m.create_table(
        Table::create()
            .table("login_failures")
            // `email:<address>` or `address:<client address>`.
            .col(string_len("key", 300).primary_key())
            .col(integer("failures"))
            .col(timestamp_with_time_zone("first_failure"))
            .col(timestamp_with_time_zone_null("locked_until"))
            .to_owned(),
    )
    .await
}

async fn create_oauth(m: &SchemaManager<'_>) -> Result<(), DbErr> {
    m.create_table(
        Table::create()
            .table("oauth_applications")
            .col(big_pk_auto("id"))
            .col(string_len("name", 255))
            .col(string_uniq("client_id"))
            .col(string("client_secret_hash"))
            .col(json_binary("redirect_uris"))
            .col(big_integer_null("user_id"))
            .col(boolean("active").default(true))
            .col(timestamp_with_time_zone("created"))
            .foreign_key(&mut fk_set_null("oauth_applications", "user_id", "users"))
            .to_owned(),
    )
    .await?;
    // What a user granted an application: the scope and the organizers chosen. Tokens and
    // codes belong to an authorization; revoking it ends them all.
    m.create_table(
        Table::create()
            .table("oauth_authorizations")
            .col(big_pk_auto("id"))
            .col(big_integer("application_id"))
            .col(big_integer("user_id"))
            .col(string("scope"))
            .col(json_binary("organizer_ids"))
            .col(timestamp_with_time_zone("created"))
            .foreign_key(&mut fk(
                "oauth_authorizations",
                "application_id",
                "oauth_applications",
            ))
            .foreign_key(&mut fk("oauth_authorizations", "user_id", "users"))
            .to_owned(),
    )
    .await?;
    m.create_index(index(
        "oauth_authorizations_user_app",
        "oauth_authorizations",
        &["user_id", "application_id"],
    ))
    .await?;
    m.create_table(
        Table::create()
            .table("oauth_codes")
            .col(big_pk_auto("id"))
            .col(big_integer("authorization_id"))
            .col(string_uniq("code_hash"))
            .col(text("redirect_uri"))
            .col(string_null("code_challenge"))
            .col(timestamp_with_time_zone("expires"))
            .col(boolean("used").default(false))
            .foreign_key(&mut fk(
                "oauth_codes",
                "authorization_id",
                "oauth_authorizations",
            ))
            .to_owned(),
    )
    .await?;
    m.create_table(
        Table::create()
            .table("oauth_refresh_tokens")
            .col(big_pk_auto("id"))
            .col(big_integer("authorization_id"))
            .col(string_uniq("token_hash"))
            .col(timestamp_with_time_zone("created"))
            .col(timestamp_with_time_zone_null("revoked"))
            .foreign_key(&mut fk(
                "oauth_refresh_tokens",
                "authorization_id",
                "oauth_authorizations",
            ))
            .to_owned(),
    )
    .await?;
    m.create_table(
        Table::create()
            .table("oauth_access_tokens")
            .col(big_pk_auto("id"))
            .col(big_integer("authorization_id"))
            .col(big_integer_null("refresh_token_id"))
            .col(string_uniq("token_hash"))
            .col(timestamp_with_time_zone("created"))
            .col(timestamp_with_time_zone("expires"))
            .foreign_key(&mut fk(
                "oauth_access_tokens",
                "authorization_id",
                "oauth_authorizations",
            ))
            .foreign_key(&mut fk(
                "oauth_access_tokens",
                "refresh_token_id",
                "oauth_refresh_tokens",
            ))
            .to_owned(),
    )
    .await
}

async fn create_resellers(m: &SchemaManager<'_>) -> Result<(), DbErr> {
    m.create_table(
        Table::create()
            .table("resellers")
            .col(big_pk_auto("id"))
            .col(string_len("name", 190))
            .col(string_len("public_name", 190).default(""))
            .col(string_len("public_url", 200).default(""))
            .col(string_len("support_email", 254).default(""))
            .col(string_len("support_phone", 50).default(""))
            .col(string_len("communication_language", 50).default("en"))
            .to_owned(),
    )
    .await?;
    m.create_table(
        Table::create()
            .table("reseller_users")
            .col(big_integer("reseller_id"))
            .col(big_integer("user_id"))
            .primary_key(Index::create().col("reseller_id").col("user_id"))
            .foreign_key(&mut fk("reseller_users", "reseller_id", "resellers"))
            .foreign_key(&mut fk("reseller_users", "user_id", "users"))
            .to_owned(),
    )
    .await?;
    m.alter_table(
        Table::alter()
            .table("organizers")
            .add_column(big_integer_null("reseller_id"))
            .to_owned(),
    )
    .await
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        create_users(m).await?;
        create_sessions(m).await?;
        create_oauth(m).await?;
        create_resellers(m).await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.alter_table(
            Table::alter()
                .table("organizers")
                .drop_column("reseller_id")
                .to_owned(),
        )
        .await?;
        for table in [
            "reseller_users",
            "resellers",
            "oauth_access_tokens",
            "oauth_refresh_tokens",
            "oauth_codes",
            "oauth_authorizations",
            "oauth_applications",
            "login_failures",
            "sessions",
            "team_members",
            "users",
        ] {
            m.drop_table(Table::drop().table(table).to_owned()).await?;
        }
        Ok(())
    }
}
