//! PDF layouts of an event, as pretix's ticket output and badge plugins serve them:
//! `ticketlayouts/` and `ticketlayoutitems/`, `badgelayouts/` and `badgeitems/`. Reading
//! needs any access to the event; writing needs its settings. The rules are
//! `domain::layouts`'.

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Object, OpenApi};
use serde_json::Value;

use super::Tag;
use crate::db::entities::{pdf_layout, pdf_layout_item};
use crate::domain::files;
use crate::domain::layouts::{self, BackgroundChange, Draft, Kind};
use crate::domain::permissions::Permission;
use crate::http::auth::EventAccess;
use crate::http::error::{DeleteResult, ListResult, ReadResult, WriteResult};
use crate::http::{ApiError, Auth, Created, JsonBody, NoContent, Page, PageRequest};
use crate::state::AppState;

/// A product printed with a layout, in a sales channel.
#[derive(Object, Clone)]
pub struct ItemAssignment {
    /// The product.
    pub item: i64,
    /// The sales channel (tickets only).
    #[oai(default = "web_channel", validator(max_length = 190))]
    pub sales_channel: String,
}

fn web_channel() -> String {
    "web".into()
}

/// A ticket layout.
#[derive(Object)]
#[oai(rename = "TicketLayout")]
pub struct TicketLayoutOut {
    /// Internal ID.
    pub id: i64,
    /// Name.
    pub name: String,
    /// Whether products without an assignment are printed with it.
    pub default: bool,
    /// The areas, in pretix's layout format.
    pub layout: Vec<Value>,
    /// URL of the background PDF: the upload, or a blank A4 page.
    pub background: String,
    /// The products printed with it.
    pub item_assignments: Vec<ItemAssignment>,
}

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
    /// Internal ID (the event's for its built-in badge).
    pub id: i64,
    /// Name.
    pub name: String,
    /// Whether products without an assignment are printed with it.
    pub default: bool,
    /// The areas, in pretix's layout format.
    pub layout: Vec<Value>,
    /// URL of the background PDF: the upload, or a blank A6 landscape card.
    pub background: String,
    /// The products printed with it.
    pub item_assignments: Vec<ItemAssignment>,
    /// Page size.
    pub size: Vec<BadgeSize>,
}

/// A layout as written. `background` takes an upload's file ID (`file:...`) of a PDF, or
/// null to remove it; its URL as read keeps it.
#[derive(Object)]
pub struct LayoutBody {
    /// Name.
    #[oai(validator(max_length = 190))]
    pub name: Option<String>,
    /// Whether products without an assignment are printed with it; one layout of the event
    /// is the default, so making this one the default ends the other's.
    pub default: Option<bool>,
    /// The areas, in pretix's layout format.
    pub layout: Option<Value>,
    /// The background PDF.
    #[oai(validator(max_length = 1000))]
    pub background: MaybeUndefined<String>,
    /// The products printed with it (each product once per sales channel).
    #[oai(validator(max_items = 1000))]
    pub item_assignments: Option<Vec<ItemAssignment>>,
}

/// Which layout prints a product.
#[derive(Object)]
#[oai(rename = "TicketLayoutItem")]
pub struct LayoutItemOut {
    /// Internal ID.
    pub id: i64,
    /// The layout.
    pub layout: i64,
    /// The product.
    pub item: i64,
    /// The sales channel.
    pub sales_channel: String,
}

/// Which badge layout prints a product.
#[derive(Object)]
#[oai(rename = "BadgeItem")]
pub struct BadgeItemOut {
    /// Internal ID.
    pub id: i64,
    /// The product.
    pub item: i64,
    /// The layout.
    pub layout: i64,
}

/// PDF layout operations.
pub struct LayoutsApi;

fn assignments_of(id: i64, all: &[pdf_layout_item::Model]) -> Vec<ItemAssignment> {
    all.iter()
        .filter(|a| a.layout_id == id)
        .map(|a| ItemAssignment {
            item: a.item_id,
            sales_channel: a.sales_channel.clone(),
        })
        .collect()
}

fn areas(row: &pdf_layout::Model) -> Vec<Value> {
    row.layout.as_array().cloned().unwrap_or_default()
}

fn ticket_out(
    state: &AppState,
    row: &pdf_layout::Model,
    all: &[pdf_layout_item::Model],
) -> TicketLayoutOut {
    TicketLayoutOut {
        id: row.id,
        name: row.name.clone(),
        default: row.is_default,
        layout: areas(row),
        background: background_url(state, Kind::Ticket, row.background.as_deref()),
        item_assignments: assignments_of(row.id, all),
    }
}

/// The URL of a layout's background: its upload, or the blank page of its kind as pretix
/// names it.
fn background_url(state: &AppState, kind: Kind, background: Option<&str>) -> String {
    match background {
        Some(file) => files::url(&state.public_url, file),
        None => format!("{}{}", state.public_url, kind.blank_background_path()),
    }
}

/// Serves the blank page of a kind of layout, where [`background_url`] says it is.
pub fn blank_background(kind: Kind) -> poem::Response {
    poem::Response::builder()
        .content_type("application/pdf")
        .header(
            poem::http::header::CACHE_CONTROL,
            "public, max-age=31536000, immutable",
        )
        .body(kind.blank_page())
}

fn size(width: f64, height: f64) -> Vec<BadgeSize> {
    vec![BadgeSize {
        width: format!("{width:.2}"),
        height: format!("{height:.2}"),
        orientation: if width > height {
            "landscape"
        } else {
            "portrait"
        }
        .into(),
    }]
}

fn badge_out(
    state: &AppState,
    row: &pdf_layout::Model,
    all: &[pdf_layout_item::Model],
) -> BadgeLayoutOut {
    BadgeLayoutOut {
        id: row.id,
        name: row.name.clone(),
        default: row.is_default,
        layout: areas(row),
        background: background_url(state, Kind::Badge, row.background.as_deref()),
        item_assignments: assignments_of(row.id, all),
        size: size(row.width_mm, row.height_mm),
    }
}

/// The built-in badge of an event without badge layouts, numbered with the event's ID.
fn built_in_badge(state: &AppState, ev: &EventAccess) -> BadgeLayoutOut {
    let (width, height) = Kind::Badge.page_mm();
    BadgeLayoutOut {
        id: ev.event.id,
        name: "Default".into(),
        default: true,
        layout: Kind::Badge
            .built_in()
            .as_array()
            .cloned()
            .unwrap_or_default(),
        background: background_url(state, Kind::Badge, None),
        item_assignments: Vec::new(),
        size: size(f64::from(width), f64::from(height)),
    }
}

/// The draft a body gives, its background as a change of `current` (the URL read back keeps
/// it; the blank page's is none).
fn draft(
    (state, auth): (&AppState, &Auth),
    kind: Kind,
    body: LayoutBody,
    current: Option<&str>,
) -> Draft {
    let background = match body.background {
        MaybeUndefined::Undefined => None,
        MaybeUndefined::Null => Some(BackgroundChange::Remove),
        MaybeUndefined::Value(v) if v == background_url(state, kind, current) => {
            Some(BackgroundChange::Keep)
        }
        MaybeUndefined::Value(v) if v == background_url(state, kind, None) => {
            Some(BackgroundChange::Remove)
        }
        MaybeUndefined::Value(file_id) => Some(BackgroundChange::Claim {
            owner: auth.0.identity(),
            file_id,
        }),
    };
    Draft {
        name: body.name,
        is_default: body.default,
        layout: body.layout,
        background,
        assignments: body.item_assignments.map(|list| {
            list.into_iter()
                .map(|a| (a.item, a.sales_channel))
                .collect()
        }),
    }
}

/// The asked page of a whole list.
fn window<T>(
    req: &Request,
    state: &AppState,
    page: Option<String>,
    page_size: Option<u64>,
    all: Vec<T>,
) -> Result<Page<T>, ApiError> {
    let window =
        PageRequest::new(req, &state.public_url, page, page_size).window(all.len() as u64)?;
    Ok(window.slice(all))
}

impl LayoutsApi {
    async fn read(
        state: &AppState,
        auth: &Auth,
        organizer: &str,
        event: &str,
    ) -> Result<EventAccess, ApiError> {
        Ok(auth.0.event(&state.db, organizer, event, None).await?)
    }

    async fn write(
        state: &AppState,
        auth: &Auth,
        organizer: &str,
        event: &str,
    ) -> Result<EventAccess, ApiError> {
        Ok(auth
            .0
            .event(
                &state.db,
                organizer,
                event,
                Some(Permission::ChangeEventSettings),
            )
            .await?)
    }

    async fn listed(
        state: &AppState,
        ev: &EventAccess,
        kind: Kind,
    ) -> Result<(Vec<pdf_layout::Model>, Vec<pdf_layout_item::Model>), ApiError> {
        let rows = layouts::list(&state.db, ev.event.id, kind).await?;
        let all = layouts::assignments(&state.db, ev.event.id, kind).await?;
        Ok((rows, all))
    }

    async fn one(
        state: &AppState,
        ev: &EventAccess,
        kind: Kind,
        id: i64,
    ) -> Result<(pdf_layout::Model, Vec<pdf_layout_item::Model>), ApiError> {
        let row = layouts::get(&state.db, ev.event.id, kind, id)
            .await?
            .ok_or_else(|| ApiError::not_found("Layout not found."))?;
        let all = layouts::assignments(&state.db, ev.event.id, kind).await?;
        Ok((row, all))
    }

    async fn create(
        state: &AppState,
        auth: &Auth,
        organizer: &str,
        event: &str,
        kind: Kind,
        body: LayoutBody,
    ) -> Result<(pdf_layout::Model, Vec<pdf_layout_item::Model>), ApiError> {
        let ev = Self::write(state, auth, organizer, event).await?;
        if body.name.as_deref().is_none_or(|n| n.trim().is_empty()) {
            return Err(ApiError::field("name", "This field is required."));
        }
        if body.layout.is_none() {
            return Err(ApiError::field("layout", "This field is required."));
        }
        let draft = draft((state, auth), kind, body, None);
        let row = layouts::create(&state.db, ev.event.id, kind, draft).await?;
        let all = layouts::assignments(&state.db, ev.event.id, kind).await?;
        Ok((row, all))
    }

    async fn change(
        state: &AppState,
        auth: &Auth,
        organizer: &str,
        event: &str,
        kind: Kind,
        id: i64,
        body: LayoutBody,
    ) -> Result<(pdf_layout::Model, Vec<pdf_layout_item::Model>), ApiError> {
        let ev = Self::write(state, auth, organizer, event).await?;
        let (current, _) = Self::one(state, &ev, kind, id).await?;
        let draft = draft((state, auth), kind, body, current.background.as_deref());
        let row = layouts::update(&state.db, ev.event.id, kind, id, draft)
            .await?
            .ok_or_else(|| ApiError::not_found("Layout not found."))?;
        let all = layouts::assignments(&state.db, ev.event.id, kind).await?;
        Ok((row, all))
    }

    async fn remove(
        state: &AppState,
        auth: &Auth,
        organizer: &str,
        event: &str,
        kind: Kind,
        id: i64,
    ) -> Result<NoContent, ApiError> {
        let ev = Self::write(state, auth, organizer, event).await?;
        if !layouts::delete(&state.db, ev.event.id, kind, id).await? {
            return Err(ApiError::not_found("Layout not found."));
        }
        Ok(NoContent::NoContent)
    }
}

#[OpenApi(tag = "Tag::Events")]
impl LayoutsApi {
    /// List ticket layouts
    ///
    /// The event's layouts of PDF tickets. Needs any access to the event.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/ticketlayouts",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_ticket_layouts(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
    ) -> ListResult<Json<Page<TicketLayoutOut>>> {
        let ev = Self::read(&state, &auth, &organizer, &event).await?;
        let (rows, all) = Self::listed(&state, &ev, Kind::Ticket).await?;
        let shown: Vec<_> = rows.iter().map(|r| ticket_out(&state, r, &all)).collect();
        Ok(Json(window(req, &state, page.0, page_size.0, shown)?))
    }

    /// Show a ticket layout
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/ticketlayouts/:id",
        method = "get"
    )]
    async fn get_ticket_layout(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<TicketLayoutOut>> {
        let ev = Self::read(&state, &auth, &organizer, &event).await?;
        let (row, all) = Self::one(&state, &ev, Kind::Ticket, *id).await?;
        Ok(Json(ticket_out(&state, &row, &all)))
    }

    /// Create a ticket layout
    ///
    /// `name` and `layout` are required. The event's first layout is its default. Needs
    /// permission to change the event's settings.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/ticketlayouts",
        method = "post"
    )]
    async fn create_ticket_layout(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonBody<LayoutBody>,
    ) -> WriteResult<Created<TicketLayoutOut>> {
        let (row, all) =
            Self::create(&state, &auth, &organizer, &event, Kind::Ticket, body.0).await?;
        Ok(Created::Created(Json(ticket_out(&state, &row, &all))))
    }

    /// Change a ticket layout
    ///
    /// Fields not sent keep their values.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/ticketlayouts/:id",
        method = "patch"
    )]
    async fn patch_ticket_layout(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<LayoutBody>,
    ) -> WriteResult<Json<TicketLayoutOut>> {
        let (row, all) =
            Self::change(&state, &auth, &organizer, &event, Kind::Ticket, *id, body.0).await?;
        Ok(Json(ticket_out(&state, &row, &all)))
    }

    /// Replace a ticket layout
    ///
    /// As PATCH; fields not sent keep their values.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/ticketlayouts/:id",
        method = "put"
    )]
    async fn put_ticket_layout(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<LayoutBody>,
    ) -> WriteResult<Json<TicketLayoutOut>> {
        let (row, all) =
            Self::change(&state, &auth, &organizer, &event, Kind::Ticket, *id, body.0).await?;
        Ok(Json(ticket_out(&state, &row, &all)))
    }

    /// Delete a ticket layout
    ///
    /// When it was the default, the oldest remaining layout becomes the default.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/ticketlayouts/:id",
        method = "delete"
    )]
    async fn delete_ticket_layout(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> DeleteResult<NoContent> {
        Ok(Self::remove(&state, &auth, &organizer, &event, Kind::Ticket, *id).await?)
    }

    /// List ticket layout assignments
    ///
    /// Which layout prints which product in which sales channel.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/ticketlayoutitems",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_ticket_layout_items(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
    ) -> ListResult<Json<Page<LayoutItemOut>>> {
        let ev = Self::read(&state, &auth, &organizer, &event).await?;
        let all = layouts::assignments(&state.db, ev.event.id, Kind::Ticket).await?;
        let shown = all
            .into_iter()
            .map(|a| LayoutItemOut {
                id: a.id,
                layout: a.layout_id,
                item: a.item_id,
                sales_channel: a.sales_channel,
            })
            .collect();
        Ok(Json(window(req, &state, page.0, page_size.0, shown)?))
    }

    /// List badge layouts
    ///
    /// The event's badge layouts; an event without any lists its built-in badge (the
    /// attendee's and event's names on an A6 card). Needs any access to the event.
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
        let ev = Self::read(&state, &auth, &organizer, &event).await?;
        let (rows, all) = Self::listed(&state, &ev, Kind::Badge).await?;
        let shown: Vec<BadgeLayoutOut> = if rows.is_empty() {
            vec![built_in_badge(&state, &ev)]
        } else {
            rows.iter().map(|r| badge_out(&state, r, &all)).collect()
        };
        Ok(Json(window(req, &state, page.0, page_size.0, shown)?))
    }

    /// Create a badge layout
    ///
    /// As ticket layouts; the page is A6 landscape without a background.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/badgelayouts",
        method = "post"
    )]
    async fn create_badge_layout(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonBody<LayoutBody>,
    ) -> WriteResult<Created<BadgeLayoutOut>> {
        let (row, all) =
            Self::create(&state, &auth, &organizer, &event, Kind::Badge, body.0).await?;
        Ok(Created::Created(Json(badge_out(&state, &row, &all))))
    }

    /// Change a badge layout
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/badgelayouts/:id",
        method = "patch"
    )]
    async fn patch_badge_layout(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<LayoutBody>,
    ) -> WriteResult<Json<BadgeLayoutOut>> {
        let (row, all) =
            Self::change(&state, &auth, &organizer, &event, Kind::Badge, *id, body.0).await?;
        Ok(Json(badge_out(&state, &row, &all)))
    }

    /// Delete a badge layout
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/badgelayouts/:id",
        method = "delete"
    )]
    async fn delete_badge_layout(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> DeleteResult<NoContent> {
        Ok(Self::remove(&state, &auth, &organizer, &event, Kind::Badge, *id).await?)
    }

    /// List badge item assignments
    ///
    /// Which badge layout prints which product. An event without badge layouts prints each
    /// admission product with its built-in badge. Needs any access to the event.
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
        let ev = Self::read(&state, &auth, &organizer, &event).await?;
        let shown = layouts::badge_items(&state.db, &ev.event).await?;
        let shown = shown
            .into_iter()
            .map(|(id, item, layout)| BadgeItemOut { id, item, layout })
            .collect();
        Ok(Json(window(req, &state, page.0, page_size.0, shown)?))
    }
}
