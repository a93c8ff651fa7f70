//! Arrangement shared by the event configuration tests: events and items inserted directly.

use chrono::{Duration, Utc};
use sea_orm::{ActiveModelTrait, EntityTrait, Set};
use serde_json::json;
use tessera::db::entities::{event, item};
use tessera_tests::TestApp;

/// Inserts an event of the organizer with that ID; returns its ID.
pub async fn add_event(app: &TestApp, organizer_id: i64, slug: &str, has_subevents: bool) -> i64 {
    event::ActiveModel {
        organizer_id: Set(organizer_id),
        slug: Set(slug.into()),
        name: Set(json!({"en": slug})),
        currency: Set("EUR".into()),
        date_from: Set(Utc::now() + Duration::days(365)),
        has_subevents: Set(has_subevents),
        ..Default::default()
    }
    .insert(&app.db)
    .await
    .expect("event")
    .id
}

/// Inserts an item of the event; returns its ID.
pub async fn add_item(
    app: &TestApp,
    event_id: i64,
    category_id: Option<i64>,
    tax_rule_id: Option<i64>,
) -> i64 {
    item::ActiveModel {
        event_id: Set(event_id),
        name: Set(json!({"en": "Ticket"})),
        default_price_cents: Set(1000),
        category_id: Set(category_id),
        tax_rule_id: Set(tax_rule_id),
        ..Default::default()
    }
    .insert(&app.db)
    .await
    .expect("item")
    .id
}

/// The item as stored now.
pub async fn item_row(app: &TestApp, id: i64) -> item::Model {
    item::Entity::find_by_id(id)
        .one(&app.db)
        .await
        .expect("query")
        .expect("item")
}
