//! Meta data properties as pretix 2026 has them. An organizer's event properties gain
//! `protected`, `filter_public`, `public_label`, `filter_allowed` and `position`, and their
//! allowed values become `choices` (a key with a label in each language). An event's item
//! properties, so far a name-to-default map on the event, become rows of their own
//! (`item_meta_properties`) with `required` and `allowed_values`.

use sea_orm_migration::sea_orm::{ConnectionTrait, QueryResult, StatementBuilder};
use sea_orm_migration::{prelude::*, schema::*};
use serde_json::{Value, json};

use crate::m0010_config_changes::{unwatch, watch};
use crate::schema_helpers::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Runs `stmt`.
async fn run<S: StatementBuilder>(m: &SchemaManager<'_>, stmt: &S) -> Result<(), DbErr> {
    m.get_connection().execute(stmt).await?;
    Ok(())
}

/// The rows `stmt` selects.
async fn rows(m: &SchemaManager<'_>, stmt: &SelectStatement) -> Result<Vec<QueryResult>, DbErr> {
    m.get_connection().query_all(stmt).await
}

/// Reads a JSON column that may come back as text (SQLite) or as JSON (PostgreSQL).
fn json_of(row: &QueryResult, col: &str) -> Value {
    row.try_get::<Value>("", col)
        .ok()
        .or_else(|| {
            row.try_get::<String>("", col)
                .ok()
                .and_then(|s| serde_json::from_str(&s).ok())
        })
        .unwrap_or(Value::Null)
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        let columns = [
            boolean("protected").default(false).to_owned(),
            boolean("filter_public").default(false).to_owned(),
            json_binary_null("public_label"),
            boolean("filter_allowed").default(true).to_owned(),
            json_binary_null("choices"),
            integer("position").default(0).to_owned(),
        ];
        for mut col in columns {
            m.alter_table(
                Table::alter()
                    .table("meta_properties")
                    .add_column(&mut col)
                    .to_owned(),
            )
            .await?;
        }
        let properties = rows(
            m,
            Query::select()
                .columns(["id", "allowed_values"])
                .from("meta_properties"),
        )
        .await?;
        for row in properties {
            let id: i64 = row.try_get("", "id")?;
            let allowed = json_of(&row, "allowed_values");
            let keys: Vec<&str> = allowed
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if keys.is_empty() {
                continue;
            }
            let choices: Vec<Value> = keys
                .iter()
                .map(|k| json!({"key": k, "label": {"en": k}}))
                .collect();
            run(
                m,
                Query::update()
                    .table("meta_properties")
                    .value("choices", Value::Array(choices))
                    .and_where(Expr::col("id").eq(id)),
            )
            .await?;
        }
        m.alter_table(
            Table::alter()
                .table("meta_properties")
                .drop_column("allowed_values")
                .to_owned(),
        )
        .await?;

        m.create_table(
            Table::create()
                .table("item_meta_properties")
                .col(big_pk_auto("id"))
                .col(big_integer("event_id"))
                .col(string_len("name", 50))
                .col(text("default_value").default(""))
                .col(boolean("required").default(false))
                .col(json_binary_null("allowed_values"))
                .foreign_key(&mut fk("item_meta_properties", "event_id", "events"))
                .to_owned(),
        )
        .await?;
        m.create_index(unique_index(
            "item_meta_properties_event_name",
            "item_meta_properties",
            &["event_id", "name"],
        ))
        .await?;
        let events = rows(
            m,
            Query::select()
                .columns(["id", "item_meta_properties"])
                .from("events"),
        )
        .await?;
        for row in events {
            let id: i64 = row.try_get("", "id")?;
            let map = json_of(&row, "item_meta_properties");
            for (name, default) in map.as_object().into_iter().flatten() {
                run(
                    m,
                    Query::insert()
                        .into_table("item_meta_properties")
                        .columns(["event_id", "name", "default_value", "required"])
                        .values_panic([
                            id.into(),
                            name.clone().into(),
                            default.as_str().unwrap_or_default().into(),
                            false.into(),
                        ]),
                )
                .await?;
            }
        }
        m.alter_table(
            Table::alter()
                .table("events")
                .drop_column("item_meta_properties")
                .to_owned(),
        )
        .await?;
        watch(m.get_connection(), &["item_meta_properties"]).await
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        unwatch(m.get_connection(), &["item_meta_properties"]).await?;
        m.alter_table(
            Table::alter()
                .table("events")
                .add_column(json_binary("item_meta_properties").default("{}"))
                .to_owned(),
        )
        .await?;
        m.drop_table(Table::drop().table("item_meta_properties").to_owned())
            .await?;
        m.alter_table(
            Table::alter()
                .table("meta_properties")
                .add_column(json_binary("allowed_values").default("[]"))
                .to_owned(),
        )
        .await?;
        for col in [
            "protected",
            "filter_public",
            "public_label",
            "filter_allowed",
            "choices",
            "position",
        ] {
            m.alter_table(
                Table::alter()
                    .table("meta_properties")
                    .drop_column(col)
                    .to_owned(),
            )
            .await?;
        }
        Ok(())
    }
}
