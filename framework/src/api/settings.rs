//! Settings of organizers and events, with inheritance:
//! `/api/v1/organizers/{organizer}/settings/` and `.../events/{event}/settings/`.

use std::borrow::Cow;
use std::collections::BTreeMap;

use poem::web::Data;
use poem_openapi::OpenApi;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::registry::{MetaSchema, MetaSchemaRef};
use poem_openapi::types::{ParseError, ParseFromJSON, ParseResult, ToJSON, Type};
use sea_orm::ConnectionTrait;
use serde_json::{Map, Value, json};

use super::Tag;
use crate::db::begin_write;
use crate::domain::permissions::Permission;
use crate::domain::settings::{self, Reach, Refused, Scope};
use crate::http::auth::EventScope;
use crate::http::error::{ReadResult, WriteResult};
use crate::http::{ApiError, Auth, FieldErrors, JsonBody};
use crate::state::AppState;

/// Settings to change: key to new value, or `null` to inherit again.
#[derive(Debug, Clone)]
pub struct SettingsChanges(pub Map<String, Value>);

impl Type for SettingsChanges {
    const IS_REQUIRED: bool = true;
    type RawValueType = Self;
    type RawElementValueType = Self;

    fn name() -> Cow<'static, str> {
        "SettingsChanges".into()
    }

    fn schema_ref() -> MetaSchemaRef {
        let mut any = MetaSchema::ANY;
        any.nullable = true;
        let mut schema = MetaSchema::new("object");
        schema.description =
            Some("Keys to set on this level; `null` removes a key so that it is inherited again.");
        schema.additional_properties = Some(Box::new(MetaSchemaRef::Inline(Box::new(any))));
        MetaSchemaRef::Inline(Box::new(schema))
    }

    fn as_raw_value(&self) -> Option<&Self::RawValueType> {
        Some(self)
    }

    fn raw_element_iter<'a>(
        &'a self,
    ) -> Box<dyn Iterator<Item = &'a Self::RawElementValueType> + 'a> {
        Box::new(std::iter::once(self))
    }
}

impl ParseFromJSON for SettingsChanges {
    fn parse_from_json(value: Option<Value>) -> ParseResult<Self> {
        match value.unwrap_or_default() {
            Value::Object(map) => Ok(Self(map)),
            other => Err(ParseError::expected_type(other)),
        }
    }
}

impl ToJSON for SettingsChanges {
    fn to_json(&self) -> Option<Value> {
        Some(Value::Object(self.0.clone()))
    }
}

/// Settings by key: values, or `{value, label, help_text}` (and `min`, `max` for numbers,
/// `max_length` for strings) with `explain=true`.
type SettingsOut = BTreeMap<String, Value>;

async fn show(
    db: &impl ConnectionTrait,
    state: &AppState,
    scope: Scope,
    explain: bool,
) -> Result<SettingsOut, ApiError> {
    let values = settings::resolve(db, &state.settings, scope).await?;
    Ok(values
        .into_iter()
        .map(|(key, value)| {
            let def = state.settings.get(key);
            let value = match def {
                Some(def) => def.shown(value),
                None => value,
            };
            let shown = match (explain, def) {
                (true, Some(def)) => {
                    let mut shown =
                        json!({"value": value, "label": def.label, "help_text": def.help_text});
                    if def.secret {
                        shown["is_set"] = (value != "").into();
                    }
                    if let Some((min, max)) = def.ty.bounds() {
                        shown["min"] = min.into();
                        shown["max"] = max.into();
                    }
                    if let Some(max_length) = def.ty.max_length() {
                        shown["max_length"] = max_length.into();
                    }
                    shown
                }
                _ => value,
            };
            (key.to_owned(), shown)
        })
        .collect())
}

/// How far the caller reaches over the organizer's events, which the settings decide on.
fn reach(auth: &Auth, organizer_id: i64) -> Reach {
    match auth.0.event_scope(organizer_id) {
        EventScope::All => Reach::AllEvents,
        EventScope::Only(_) => Reach::SomeEvents,
    }
}

async fn change(
    state: &AppState,
    scope: Scope,
    reach: Reach,
    changes: &Map<String, Value>,
) -> Result<SettingsOut, ApiError> {
    let txn = begin_write(&state.db).await?;
    match settings::update_as(&txn, &state.settings, scope, reach, changes).await? {
        Ok(()) => {}
        Err(Refused::Forbidden(keys)) => {
            return Err(ApiError::forbidden_because(format!(
                "Events of this organizer you do not have access to inherit these settings; \
                 only a team with access to all events can change them here: {}.",
                keys.join(", ")
            )));
        }
        Err(Refused::Invalid(errors)) => {
            let mut fields = FieldErrors::new();
            for (key, message) in errors {
                fields.push(&key, message);
            }
            return Err(ApiError::fields(fields));
        }
    }
    let shown = show(&txn, state, scope, false).await?;
    crate::db::commit(txn).await?;
    Ok(shown)
}

/// Settings operations.
pub struct SettingsApi;

#[OpenApi(tag = "Tag::Events")]
impl SettingsApi {
    /// Show an event's settings
    ///
    /// Values set on the event, else on its organizer, else the defaults. With
    /// `explain=true` every key gives `{value, label, help_text}`, numbers also `min` and
    /// `max`, strings (and lists of them) `max_length`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/settings",
        method = "get"
    )]
    async fn get_event_settings(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        explain: Query<Option<bool>>,
    ) -> ReadResult<Json<SettingsOut>> {
        let access = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeEventSettings),
            )
            .await?;
        let scope = Scope::Event {
            organizer_id: access.organizer.id,
            event_id: access.event.id,
        };
        Ok(Json(
            show(&state.db, &state, scope, explain.0.unwrap_or(false)).await?,
        ))
    }

    /// Change an event's settings
    ///
    /// Sets the sent keys on the event, which stops their inheritance; `null` removes a
    /// key so it is inherited again. Unknown keys and invalid values are 400, per key, and
    /// then nothing changes.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/settings",
        method = "patch"
    )]
    async fn patch_event_settings(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonBody<SettingsChanges>,
    ) -> WriteResult<Json<SettingsOut>> {
        let access = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeEventSettings),
            )
            .await?;
        let scope = Scope::Event {
            organizer_id: access.organizer.id,
            event_id: access.event.id,
        };
        let reach = reach(&auth, access.organizer.id);
        Ok(Json(change(&state, scope, reach, &body.0.0).await?))
    }

    /// Show an organizer's settings
    #[oai(path = "/api/v1/organizers/:organizer/settings", method = "get")]
    async fn get_organizer_settings(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        explain: Query<Option<bool>>,
    ) -> ReadResult<Json<SettingsOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeOrganizerSettings))?;
        Ok(Json(
            show(
                &state.db,
                &state,
                Scope::Organizer(org.organizer.id),
                explain.0.unwrap_or(false),
            )
            .await?,
        ))
    }

    /// Change an organizer's settings
    ///
    /// Values set here are inherited by every event that does not set its own, so settings
    /// that events inherit can be changed here only by a team with access to all events
    /// (otherwise 403, and nothing changes). Settings kept per event, such as those of
    /// payment providers, cannot be set here (400).
    #[oai(path = "/api/v1/organizers/:organizer/settings", method = "patch")]
    async fn patch_organizer_settings(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        body: JsonBody<SettingsChanges>,
    ) -> WriteResult<Json<SettingsOut>> {
        let org = auth
            .0
            .organizer(&organizer, Some(Permission::ChangeOrganizerSettings))?;
        let reach = reach(&auth, org.organizer.id);
        Ok(Json(
            change(&state, Scope::Organizer(org.organizer.id), reach, &body.0.0).await?,
        ))
    }
}
