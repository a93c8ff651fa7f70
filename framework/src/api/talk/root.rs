//! The root of the talk side and its events: `GET /api/`, `GET /api/events/` (a plain
//! list, as in pretalx) and `GET /api/events/{event}/`.

use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{Value, json};

use super::TalkTag;
use super::lang::{event_locales, flatten};
use super::shape::{Shaped, TalkText};
use crate::db::entities::event;
use crate::domain::talk::endpoints::Action;
use crate::http::ApiError;
use crate::http::error::{ListResult, ReadResult, TalkResult};
use crate::http::talk::Talk;
use crate::state::AppState;

/// What the talk side serves.
#[derive(Object)]
pub struct TalkRoot {
    /// The service's name.
    pub name: String,
    /// The service's version.
    pub version: String,
    /// The current talk-side API version.
    pub api_version: String,
    /// Where to go next.
    pub urls: TalkRootUrls,
}

/// Links of the talk-side root.
#[derive(Object)]
pub struct TalkRootUrls {
    /// The list of events.
    pub events: String,
}

/// A talk-side event in a list.
#[derive(Object)]
#[oai(rename = "TalkEvent")]
pub struct TalkEventOut {
    /// Name.
    pub name: TalkText,
    /// Slug, unique among talk-side events.
    pub slug: String,
    /// Whether the event is public.
    pub is_public: bool,
    /// First day (in the event's time zone).
    pub date_from: chrono::NaiveDate,
    /// Last day.
    pub date_to: chrono::NaiveDate,
    /// Time zone.
    pub timezone: String,
}

/// A talk-side event in full.
#[derive(Object)]
#[oai(rename = "TalkEventDetail")]
pub struct TalkEventDetail {
    /// Name.
    pub name: TalkText,
    /// Slug, unique among talk-side events.
    pub slug: String,
    /// Whether the event is public.
    pub is_public: bool,
    /// First day (in the event's time zone).
    pub date_from: chrono::NaiveDate,
    /// Last day.
    pub date_to: chrono::NaiveDate,
    /// Time zone.
    pub timezone: String,
    /// Contact address.
    #[oai(nullable)]
    pub email: Option<String>,
    /// Main colour of the event's pages.
    #[oai(nullable)]
    pub primary_color: Option<String>,
    /// The event's own domain.
    #[oai(nullable)]
    pub custom_domain: Option<String>,
    /// Logo URL.
    #[oai(nullable)]
    pub logo: Option<String>,
    /// Header image URL.
    #[oai(nullable)]
    pub header_image: Option<String>,
    /// Social media image URL.
    #[oai(nullable)]
    pub og_image: Option<String>,
    /// Default language.
    pub locale: String,
    /// Languages of the event's pages.
    pub locales: Vec<String>,
    /// Languages submissions may be in.
    pub content_locales: Vec<String>,
}

/// The talk side's root and events.
pub struct TalkRootApi;

/// The event's first and last day in its time zone.
fn days(ev: &event::Model) -> (chrono::NaiveDate, chrono::NaiveDate) {
    let tz: chrono_tz::Tz = ev.timezone.parse().unwrap_or(chrono_tz::UTC);
    let from = ev.date_from.with_timezone(&tz).date_naive();
    let to = ev
        .date_to
        .map_or(from, |d| d.with_timezone(&tz).date_naive());
    (from, to)
}

/// The list form of an event, its name in `lang` when that is one of its languages.
async fn summary(
    state: &AppState,
    ev: &event::Model,
    lang: Option<&str>,
) -> Result<Value, ApiError> {
    let (from, to) = days(ev);
    let lang = match lang {
        Some(l) if event_locales(state, ev).await?.iter().any(|x| x == l) => Some(l),
        _ => None,
    };
    Ok(json!({
        "name": flatten(&ev.name, lang),
        "slug": ev.slug,
        "is_public": ev.is_public,
        "date_from": from,
        "date_to": to,
        "timezone": ev.timezone,
    }))
}

#[OpenApi(tag = "TalkTag::Events")]
impl TalkRootApi {
    /// The talk side's root
    ///
    /// Names the service, its version and the current talk-side API version. Anyone may
    /// ask; credentials, when sent, must authenticate.
    #[oai(path = "/api", method = "get")]
    async fn talk_root(&self, state: Data<&AppState>, talk: Talk) -> TalkResult<Json<TalkRoot>> {
        let _ = talk;
        Ok(Json(TalkRoot {
            name: "tessera".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            api_version: crate::domain::talk::version::CURRENT.name().into(),
            urls: TalkRootUrls {
                events: format!("{}/api/events/", state.public_url),
            },
        }))
    }

    /// List talk-side events
    ///
    /// A plain list, not paginated: the public events with the talk side on, and those the
    /// token's user works on within the token's events. `q` searches names, `is_public`
    /// filters, `o` orders by `date_from` (default `-date_from`), `date_to`, `name` or
    /// `slug`.
    #[oai(path = "/api/events", method = "get")]
    async fn talk_events(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// Text the name contains, in any language.
        #[oai(validator(max_length = 200))]
        q: Query<Option<String>>,
        /// Only public (`true`) or non-public (`false`) events.
        is_public: Query<Option<bool>>,
        /// Order: `date_from`, `date_to`, `name` or `slug`; `-` before it for descending.
        o: Query<Option<String>>,
        /// Flattens names to this language where it is one of the event's.
        #[oai(validator(max_length = 32))]
        lang: Query<Option<String>>,
    ) -> ListResult<Json<Vec<Shaped<TalkEventOut>>>> {
        talk.allow("events", Action::List)?;
        let mut rows = event::Entity::find()
            .filter(event::Column::TalkEnabled.eq(true))
            .all(&state.db)
            .await?;
        let needle = q
            .as_deref()
            .map(str::to_lowercase)
            .filter(|n| !n.is_empty());
        rows.retain(|ev| {
            talk.role_on(ev).is_ok()
                && is_public.is_none_or(|p| ev.is_public == p)
                && needle
                    .as_ref()
                    .is_none_or(|n| ev.name.to_string().to_lowercase().contains(n))
        });
        let (desc, key) = match o.as_deref() {
            Some(o) => o.strip_prefix('-').map_or((false, o), |k| (true, k)),
            None => (true, "date_from"),
        };
        rows.sort_by(|a, b| {
            let ord = match key {
                "date_to" => a.date_to.cmp(&b.date_to),
                "name" => a.name.to_string().cmp(&b.name.to_string()),
                "slug" => a.slug.cmp(&b.slug),
                _ => a.date_from.cmp(&b.date_from),
            };
            if desc { ord.reverse() } else { ord }
        });
        let mut out = Vec::with_capacity(rows.len());
        for ev in &rows {
            out.push(Shaped::new(summary(&state, ev, lang.as_deref()).await?));
        }
        Ok(Json(out))
    }

    /// Show a talk-side event
    ///
    /// 404 for an event without the talk side or one the caller may not see.
    #[oai(path = "/api/events/:event", method = "get")]
    async fn talk_event(
        &self,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// Flattens the name to this language where it is one of the event's.
        #[oai(validator(max_length = 32))]
        lang: Query<Option<String>>,
    ) -> ReadResult<Json<Shaped<TalkEventDetail>>> {
        talk.allow("events", Action::Retrieve)?;
        let ev = talk.event(&state.db, &event).await?;
        let generation = state.cache.generation().await;
        let settings = crate::domain::settings::of_event(
            &state.db,
            &state.settings,
            generation.map(|g| (state.cache.as_ref(), g)),
            &ev.event,
        )
        .await?;
        let mut out = summary(&state, &ev.event, lang.as_deref()).await?;
        let locales = settings
            .get("locales")
            .cloned()
            .unwrap_or_else(|| json!(["en"]));
        out["email"] = settings
            .get("contact_mail")
            .cloned()
            .filter(|m| m.as_str().is_some_and(|m| !m.is_empty()))
            .unwrap_or(Value::Null);
        // Pages of the talk side are not served here: no colour, domain or images.
        for field in [
            "primary_color",
            "custom_domain",
            "logo",
            "header_image",
            "og_image",
        ] {
            out[field] = Value::Null;
        }
        out["locale"] = settings
            .get("locale")
            .cloned()
            .unwrap_or_else(|| json!("en"));
        out["content_locales"] = locales.clone();
        out["locales"] = locales;
        Ok(Json(Shaped::new(out)))
    }
}
