//! Badge printing data scanners sync: `badgelayouts/` and `badgeitems/`. Every event has one
//! layout, its default badge (attendee and event name on an A6 card,
//! `orders::ticket::default_badge_layout`), numbered with the event's ID, and every admission
//! item is printed with it.

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use serde_json::Value;

use super::Tag;
use crate::db::entities::item;
use crate::domain::orders::ticket::default_badge_layout;
use crate::http::error::ListResult;
use crate::http::{Auth, Page, PageRequest};
use crate::state::AppState;

/// The size of a badge's page.
#[derive(Object)]
pub struct BadgeSize {
    /// Width in millimetres.
    pub width: String,
    /// Height in millimetres.
    pub height: String,
    /// `landscape` or `portrait`.
    pub orientation: String,
}

/// A badge layout.
#[derive(Object)]
#[oai(rename = "BadgeLayout")]
pub struct BadgeLayoutOut {
    /// Internal ID (the event's: each event has its default badge).
    pub id: i64,
    /// Name.
    pub name: String,
    /// Whether items without an assignment are printed with it.
    pub default: bool,
    /// The elements on the badge, in pretix's layout format.
    pub layout: Vec<Value>,
    /// URL of the background PDF (none: a blank card).
    #[oai(nullable)]
    pub background: Option<String>,
    /// Page size.
    pub size: Vec<BadgeSize>,
}

/// Which layout an item's badges are printed with.
#[derive(Object)]
#[oai(rename = "BadgeItem")]
pub struct BadgeItemOut {
    /// Internal ID (the item's).
    pub id: i64,
    /// The item.
    pub item: i64,
    /// The layout.
    pub layout: i64,
}

/// Badge operations.
pub struct BadgesApi;

#[OpenApi(tag = "Tag::Events")]
impl BadgesApi {
    /// List badge layouts
    ///
    /// The event's default badge. Needs any access to the event.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/badgelayouts",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_badge_layouts(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
    ) -> ListResult<Json<Page<BadgeLayoutOut>>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        let window = PageRequest::new(req, &state.public_url, page.0, page_size.0).window(1)?;
        let layout = BadgeLayoutOut {
            id: ev.event.id,
            name: "Default".into(),
            default: true,
            layout: default_badge_layout()
                .as_array()
                .cloned()
                .unwrap_or_default(),
            background: None,
            size: vec![BadgeSize {
                width: "148.00".into(),
                height: "105.00".into(),
                orientation: "landscape".into(),
            }],
        };
        Ok(Json(window.page(vec![layout])))
    }

    /// List badge item assignments
    ///
    /// Each admission item of the event, printed with the event's default badge. Needs any
    /// access to the event.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/badgeitems",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_badge_items(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
    ) -> ListResult<Json<Page<BadgeItemOut>>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        let query = item::Entity::find()
            .filter(item::Column::EventId.eq(ev.event.id))
            .filter(item::Column::Admission.eq(true))
            .order_by_asc(item::Column::Id);
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .fetch(&state.db, query)
            .await?;
        let layout = ev.event.id;
        Ok(Json(page.map(|i| BadgeItemOut {
            id: i.id,
            item: i.id,
            layout,
        })))
    }
}
