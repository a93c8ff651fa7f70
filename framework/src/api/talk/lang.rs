//! The talk side's languages: an event's, and multi-language strings flattened to the one a
//! request asks for.

use serde_json::{Value, json};

use crate::domain::settings;
use crate::http::ApiError;
use crate::state::AppState;

/// The event's languages, from its settings.
pub async fn event_locales(
    state: &AppState,
    ev: &crate::db::entities::event::Model,
) -> Result<Vec<String>, ApiError> {
    let generation = state.cache.generation().await;
    let cache = generation.map(|g| (state.cache.as_ref(), g));
    Ok(settings::languages_of(&state.db, &state.settings, cache, ev).await?)
}

/// A stored multi-language string, flattened to `lang` when given.
pub fn flatten(stored: &Value, lang: Option<&str>) -> Value {
    match lang {
        Some(l) => stored
            .get(l)
            .or_else(|| stored.as_object().and_then(|o| o.values().next()))
            .cloned()
            .unwrap_or_else(|| json!("")),
        None if stored.is_object() => stored.clone(),
        None => json!({}),
    }
}
