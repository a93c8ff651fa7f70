//! Layouts of an event's PDF tickets and badges, as pretix's ticket output and badge
//! plugins keep them: written and checked, one default per event and kind, assigned to
//! products per sales channel, chosen for a position, and prepared for rendering once per
//! version of the layout.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use sea_orm::sea_query::ExprTrait;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    QueryFilter, QueryOrder, Set,
};
use serde_json::{Value, json};

use crate::db::entities::{file, item, pdf_layout, pdf_layout_item};
use crate::domain::cache::Cache;
use crate::domain::extensions::tickets::TicketRequest;
use crate::domain::files::{self, ClaimRefused};
use crate::domain::orders::file_answers;
use crate::domain::refusal::Refusal;
use crate::domain::tickets::variables::{Sheet, Ticket};
use crate::pdf::{self, Background, Layout, Prepared};

/// What a layout prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Tickets (pretix's `ticketlayouts`).
    Ticket,
    /// Badges (pretix's `badgelayouts`).
    Badge,
}

impl Kind {
    /// The name stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Ticket => "ticket",
            Kind::Badge => "badge",
        }
    }

    /// Where a layout without a background says its blank page is, as pretix does: a path
    /// of the site, which serves [`Kind::blank_page`] there.
    pub fn blank_background_path(self) -> &'static str {
        match self {
            Kind::Ticket => "/static/pretixpresale/pdf/ticket_default_a4.pdf",
            Kind::Badge => "/static/pretixplugins/badges/badge_default_a6l.pdf",
        }
    }

    /// A PDF of one blank page of [`Kind::page_mm`], made once: what apps that print
    /// layouts themselves (pretixPOS, pretixSCAN) draw on when a layout has no background.
    pub fn blank_page(self) -> &'static [u8] {
        static PAGES: std::sync::LazyLock<[Vec<u8>; 2]> = std::sync::LazyLock::new(|| {
            [Kind::Ticket, Kind::Badge].map(|kind| {
                let (width, height) = kind.page_mm();
                let mut writer = pdf::writer::Writer::new();
                writer.start_page(width * pdf::MM, height * pdf::MM);
                writer.finish(None, 1, "")
            })
        });
        &PAGES[self as usize]
    }

    /// The page size without a background, in millimetres: A4 for tickets, A6 landscape
    /// for badges.
    pub fn page_mm(self) -> (f32, f32) {
        match self {
            Kind::Ticket => (210.0, 297.0),
            Kind::Badge => (148.0, 105.0),
        }
    }

    /// The layout of an event that has none of its own.
    pub fn built_in(self) -> Value {
        match self {
            Kind::Ticket => default_ticket_layout(),
            Kind::Badge => default_badge_layout(),
        }
    }
}

/// A text container of the built-in layouts.
fn text(
    content: &str,
    left: f32,
    bottom: f32,
    width: f32,
    height: f32,
    size: f32,
    bold: bool,
) -> Value {
    json!({
        "type": "textcontainer", "page": 1, "locale": "",
        "left": format!("{left:.2}"), "bottom": format!("{bottom:.2}"),
        "width": format!("{width:.2}"), "height": format!("{height:.2}"),
        "fontsize": format!("{size:.1}"), "lineheight": "1", "color": [0, 0, 0, 1],
        "fontfamily": "Open Sans", "bold": bold, "italic": false, "content": content,
        "text": "", "text_i18n": {}, "rotation": 0, "align": "left",
        "verticalalign": "middle", "autoresize": true, "splitlongwords": true,
    })
}

/// The ticket of an event without a layout of its own: the QR code top right, as pretix
/// places it, and what the ticket is for down the left.
pub fn default_ticket_layout() -> Value {
    let mut areas = vec![json!({
        "type": "barcodearea", "page": 1, "left": "130.40", "bottom": "204.50",
        "size": "64.00", "content": "secret", "text": "", "text_i18n": {},
        "nowhitespace": false, "color": [0, 0, 0, 1],
    })];
    let lines = [
        ("event_name", 14.0, true, 11.8),
        ("itemvar", 13.0, false, 7.8),
        ("attendee_name", 13.0, false, 7.8),
        ("event_begin", 11.0, false, 6.5),
        ("seat", 11.0, false, 6.5),
        ("event_location", 11.0, false, 13.0),
        ("order", 11.0, false, 6.5),
        ("price", 11.0, false, 6.5),
        ("secret", 9.0, false, 6.5),
    ];
    let mut top = 284.0;
    for (content, size, bold, height) in lines {
        let width = if content == "event_name" {
            177.0
        } else {
            110.0
        };
        areas.push(text(
            content,
            16.35,
            top - height,
            width,
            height,
            size,
            bold,
        ));
        top -= height + 2.5;
    }
    areas.push(json!({
        "type": "poweredby", "page": 1, "left": "88.72", "bottom": "10.00",
        "size": "32.00", "content": "dark",
    }));
    Value::Array(areas)
}

/// The badge of an event without a layout of its own: the attendee's name large, the
/// event's name below it, on an A6 landscape card.
pub fn default_badge_layout() -> Value {
    let area = |content: &str, bottom: &str, size: &str, bold: bool| {
        json!({
            "type": "textarea", "page": 1, "locale": "",
            "left": "10.00", "bottom": bottom, "width": "128.00",
            "fontsize": size, "lineheight": "1.00", "color": [0, 0, 0, 1],
            "fontfamily": "Open Sans", "bold": bold, "italic": false,
            "align": "center", "content": content, "text": "", "rotation": 0,
        })
    };
    json!([
        area("attendee_name", "55.00", "24.0", true),
        area("event_name", "30.00", "14.0", false),
    ])
}

/// What a write does to a layout's background.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BackgroundChange {
    /// It stays (none for a new layout).
    Keep,
    /// It is removed.
    Remove,
    /// It becomes the upload with this file ID of `owner`, a PDF.
    Claim {
        /// Identity of the caller who uploaded it.
        owner: String,
        /// The file ID sent.
        file_id: String,
    },
}

/// A layout as a write gives it; `None` keeps what is stored.
#[derive(Debug, Clone, Default)]
pub struct Draft {
    /// Name.
    pub name: Option<String>,
    /// Whether it becomes (or stops being) the default.
    pub is_default: Option<bool>,
    /// The areas.
    pub layout: Option<Value>,
    /// The background.
    pub background: Option<BackgroundChange>,
    /// The products it prints, with their sales channels; each moves here from any other
    /// layout of the kind that printed it in that channel.
    pub assignments: Option<Vec<(i64, String)>>,
}

/// The layouts of an event of a kind, oldest first.
pub async fn list(
    db: &impl ConnectionTrait,
    event_id: i64,
    kind: Kind,
) -> Result<Vec<pdf_layout::Model>, DbErr> {
    pdf_layout::Entity::find()
        .filter(pdf_layout::Column::EventId.eq(event_id))
        .filter(pdf_layout::Column::Kind.eq(kind.as_str()))
        .order_by_asc(pdf_layout::Column::Id)
        .all(db)
        .await
}

/// One layout of an event.
pub async fn get(
    db: &impl ConnectionTrait,
    event_id: i64,
    kind: Kind,
    id: i64,
) -> Result<Option<pdf_layout::Model>, DbErr> {
    pdf_layout::Entity::find_by_id(id)
        .filter(pdf_layout::Column::EventId.eq(event_id))
        .filter(pdf_layout::Column::Kind.eq(kind.as_str()))
        .one(db)
        .await
}

/// The product assignments of an event's layouts of a kind.
pub async fn assignments(
    db: &impl ConnectionTrait,
    event_id: i64,
    kind: Kind,
) -> Result<Vec<pdf_layout_item::Model>, DbErr> {
    let ids = list_ids(db, event_id, kind).await?;
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    pdf_layout_item::Entity::find()
        .filter(pdf_layout_item::Column::LayoutId.is_in(ids))
        .order_by_asc(pdf_layout_item::Column::Id)
        .all(db)
        .await
}

/// Checks a layout's areas; the refusal is pretix's message on `layout`.
pub fn check_layout(layout: &Value) -> Result<Layout, Refusal> {
    Layout::parse(layout).map_err(|e| {
        Refusal::field(
            "layout",
            format!("Your layout file is not a valid layout. Error message: {e}"),
        )
    })
}

/// The background after a change: an upload is claimed (a PDF, readable) in `txn`.
async fn background_after(
    txn: &impl ConnectionTrait,
    current: Option<String>,
    change: BackgroundChange,
) -> Result<Option<String>, Refusal> {
    let (owner, file_id) = match change {
        BackgroundChange::Keep => return Ok(current),
        BackgroundChange::Remove => return Ok(None),
        BackgroundChange::Claim { owner, file_id } => (owner, file_id),
    };
    let reference = match files::claim(txn, &owner, &file_id, &["application/pdf"]).await? {
        Ok(reference) => reference,
        Err(ClaimRefused::Unknown) => {
            return Err(Refusal::field(
                "background",
                "The file ID is unknown, has expired or belongs to someone else.",
            ));
        }
        Err(ClaimRefused::WrongType) => {
            return Err(Refusal::field(
                "background",
                "A background has to be a PDF file.",
            ));
        }
    };
    let data = stored_file(txn, &reference).await?.unwrap_or_default();
    read_background(data)
        .await
        .map_err(|e| Refusal::field("background", e))?;
    Ok(Some(reference))
}

/// The bytes of a claimed file.
async fn stored_file(db: &impl ConnectionTrait, reference: &str) -> Result<Option<Vec<u8>>, DbErr> {
    Ok(
        file::Entity::find_by_id(files::file_key(reference).to_owned())
            .one(db)
            .await?
            .map(|f| f.data),
    )
}

/// Reads a background away from the request threads.
async fn read_background(data: Vec<u8>) -> Result<Background, String> {
    tokio::task::spawn_blocking(move || Background::from_pdf(data))
        .await
        .map_err(|_| "The PDF could not be read.".to_owned())?
}

/// Makes the event's layouts other than `keep` not the default, holding the event's row
/// so that concurrent writes agree on one default.
async fn unset_other_defaults(
    txn: &impl ConnectionTrait,
    event_id: i64,
    kind: Kind,
    keep: i64,
) -> Result<(), DbErr> {
    pdf_layout::Entity::update_many()
        .col_expr(
            pdf_layout::Column::IsDefault,
            sea_orm::sea_query::Expr::value(false),
        )
        .col_expr(
            pdf_layout::Column::Version,
            sea_orm::sea_query::Expr::col(pdf_layout::Column::Version).add(1),
        )
        .filter(pdf_layout::Column::EventId.eq(event_id))
        .filter(pdf_layout::Column::Kind.eq(kind.as_str()))
        .filter(pdf_layout::Column::IsDefault.eq(true))
        .filter(pdf_layout::Column::Id.ne(keep))
        .exec(txn)
        .await?;
    Ok(())
}

/// Whether the event has a default layout of the kind.
async fn has_default(txn: &impl ConnectionTrait, event_id: i64, kind: Kind) -> Result<bool, DbErr> {
    Ok(list(txn, event_id, kind)
        .await?
        .iter()
        .any(|l| l.is_default))
}

/// Creates a layout; the event's first one of a kind is its default.
pub async fn create(
    db: &DatabaseConnection,
    event_id: i64,
    kind: Kind,
    draft: Draft,
) -> Result<pdf_layout::Model, Refusal> {
    let layout = draft.layout.unwrap_or_else(|| kind.built_in());
    check_layout(&layout)?;
    let txn = crate::db::begin_write(db).await?;
    crate::db::lock_row(&*txn, "events", event_id).await?;
    let background = background_after(
        &*txn,
        None,
        draft.background.unwrap_or(BackgroundChange::Keep),
    )
    .await?;
    let is_default = match draft.is_default {
        Some(d) => d,
        None => !has_default(&*txn, event_id, kind).await?,
    };
    let (width, height) = kind.page_mm();
    let row = pdf_layout::ActiveModel {
        event_id: Set(event_id),
        kind: Set(kind.as_str().into()),
        name: Set(draft.name.unwrap_or_default()),
        is_default: Set(is_default),
        layout: Set(layout),
        background: Set(background),
        width_mm: Set(f64::from(width)),
        height_mm: Set(f64::from(height)),
        version: Set(1),
        ..Default::default()
    }
    .insert(&*txn)
    .await?;
    if is_default {
        unset_other_defaults(&*txn, event_id, kind, row.id).await?;
    }
    if let Some(list) = draft.assignments {
        assign(&*txn, event_id, kind, row.id, list).await?;
    }
    crate::db::commit(txn).await?;
    Ok(row)
}

/// Changes a layout; `None` when the event has no such layout.
pub async fn update(
    db: &DatabaseConnection,
    event_id: i64,
    kind: Kind,
    id: i64,
    draft: Draft,
) -> Result<Option<pdf_layout::Model>, Refusal> {
    if let Some(layout) = &draft.layout {
        check_layout(layout)?;
    }
    let txn = crate::db::begin_write(db).await?;
    crate::db::lock_row(&*txn, "events", event_id).await?;
    let Some(current) = get(&*txn, event_id, kind, id).await? else {
        return Ok(None);
    };
    let old_background = current.background.clone();
    let background = background_after(
        &*txn,
        current.background.clone(),
        draft.background.unwrap_or(BackgroundChange::Keep),
    )
    .await?;
    let becomes_default = draft.is_default == Some(true) && !current.is_default;
    let mut row: pdf_layout::ActiveModel = current.clone().into();
    if let Some(name) = draft.name {
        row.name = Set(name);
    }
    if let Some(layout) = draft.layout {
        row.layout = Set(layout);
    }
    if let Some(d) = draft.is_default {
        row.is_default = Set(d);
    }
    row.background = Set(background.clone());
    row.version = Set(current.version + 1);
    let row = row.update(&*txn).await?;
    if becomes_default {
        unset_other_defaults(&*txn, event_id, kind, row.id).await?;
    }
    if let Some(list) = draft.assignments {
        assign(&*txn, event_id, kind, row.id, list).await?;
    }
    if old_background != background {
        forget_unused(&*txn, old_background).await?;
    }
    crate::db::commit(txn).await?;
    Ok(Some(row))
}

/// Deletes a layout; when it was the default, the oldest remaining one becomes the
/// default. False when the event has no such layout.
pub async fn delete(
    db: &DatabaseConnection,
    event_id: i64,
    kind: Kind,
    id: i64,
) -> Result<bool, DbErr> {
    let txn = crate::db::begin_write(db).await?;
    crate::db::lock_row(&*txn, "events", event_id).await?;
    let Some(current) = get(&*txn, event_id, kind, id).await? else {
        return Ok(false);
    };
    pdf_layout::Entity::delete_by_id(id).exec(&*txn).await?;
    forget_unused(&*txn, current.background).await?;
    if current.is_default
        && let Some(first) = list(&*txn, event_id, kind).await?.into_iter().next()
    {
        let version = first.version + 1;
        let mut promoted: pdf_layout::ActiveModel = first.into();
        promoted.is_default = Set(true);
        promoted.version = Set(version);
        promoted.update(&*txn).await?;
    }
    crate::db::commit(txn).await?;
    Ok(true)
}

/// Forgets a background no layout uses any more (a cloned event's layouts share their
/// source's).
async fn forget_unused(
    txn: &impl ConnectionTrait,
    background: Option<String>,
) -> Result<(), DbErr> {
    let Some(reference) = background else {
        return Ok(());
    };
    let used = pdf_layout::Entity::find()
        .filter(pdf_layout::Column::Background.eq(reference.clone()))
        .one(txn)
        .await?
        .is_some();
    if !used {
        files::forget(txn, &[reference]).await?;
    }
    Ok(())
}

/// Copies an event's layouts of both kinds onto a clone, their product assignments remapped
/// to the copied products (`items`: old to new IDs); backgrounds are shared.
pub async fn clone_layouts(
    txn: &impl ConnectionTrait,
    from: i64,
    to: i64,
    items: &HashMap<i64, i64>,
) -> Result<(), DbErr> {
    for kind in [Kind::Ticket, Kind::Badge] {
        let assigned = assignments(txn, from, kind).await?;
        for row in list(txn, from, kind).await? {
            let copy = pdf_layout::ActiveModel {
                event_id: Set(to),
                kind: Set(row.kind.clone()),
                name: Set(row.name.clone()),
                is_default: Set(row.is_default),
                layout: Set(row.layout.clone()),
                background: Set(row.background.clone()),
                width_mm: Set(row.width_mm),
                height_mm: Set(row.height_mm),
                version: Set(1),
                ..Default::default()
            }
            .insert(txn)
            .await?;
            for a in assigned.iter().filter(|a| a.layout_id == row.id) {
                let Some(item_id) = items.get(&a.item_id) else {
                    continue;
                };
                pdf_layout_item::ActiveModel {
                    layout_id: Set(copy.id),
                    item_id: Set(*item_id),
                    sales_channel: Set(a.sales_channel.clone()),
                    ..Default::default()
                }
                .insert(txn)
                .await?;
            }
        }
    }
    Ok(())
}

/// Makes `list` the products a layout prints: each must be the event's, once per sales
/// channel; a product printed in a channel by another layout of the kind moves here.
async fn assign(
    txn: &impl ConnectionTrait,
    event_id: i64,
    kind: Kind,
    layout_id: i64,
    mut list: Vec<(i64, String)>,
) -> Result<(), Refusal> {
    list.sort();
    list.dedup();
    let ids: Vec<i64> = list.iter().map(|(i, _)| *i).collect();
    let known = item::Entity::find()
        .filter(item::Column::EventId.eq(event_id))
        .filter(item::Column::Id.is_in(ids.clone()))
        .all(txn)
        .await?;
    if let Some((missing, _)) = list.iter().find(|(i, _)| !known.iter().any(|k| k.id == *i)) {
        return Err(Refusal::field(
            "item_assignments",
            format!("The event has no product {missing}."),
        ));
    }
    let layouts: Vec<i64> = list_ids(txn, event_id, kind).await?;
    pdf_layout_item::Entity::delete_many()
        .filter(pdf_layout_item::Column::LayoutId.eq(layout_id))
        .exec(txn)
        .await?;
    for (item_id, channel) in list {
        pdf_layout_item::Entity::delete_many()
            .filter(pdf_layout_item::Column::LayoutId.is_in(layouts.clone()))
            .filter(pdf_layout_item::Column::ItemId.eq(item_id))
            .filter(pdf_layout_item::Column::SalesChannel.eq(channel.clone()))
            .exec(txn)
            .await?;
        pdf_layout_item::ActiveModel {
            layout_id: Set(layout_id),
            item_id: Set(item_id),
            sales_channel: Set(channel),
            ..Default::default()
        }
        .insert(txn)
        .await?;
    }
    Ok(())
}

async fn list_ids(db: &impl ConnectionTrait, event_id: i64, kind: Kind) -> Result<Vec<i64>, DbErr> {
    Ok(list(db, event_id, kind)
        .await?
        .iter()
        .map(|l| l.id)
        .collect())
}

/// Which badge layout prints which product, as `(id, item, layout)`: the assignments of
/// the event's badge layouts; an event without any prints each admission product with its
/// built-in badge (numbered with the event's ID).
pub async fn badge_items(
    db: &impl ConnectionTrait,
    ev: &crate::db::entities::event::Model,
) -> Result<Vec<(i64, i64, i64)>, DbErr> {
    if list_ids(db, ev.id, Kind::Badge).await?.is_empty() {
        let admitting = item::Entity::find()
            .filter(item::Column::EventId.eq(ev.id))
            .filter(item::Column::Admission.eq(true))
            .order_by_asc(item::Column::Id)
            .all(db)
            .await?;
        return Ok(admitting.iter().map(|i| (i.id, i.id, ev.id)).collect());
    }
    Ok(assignments(db, ev.id, Kind::Badge)
        .await?
        .into_iter()
        .map(|a| (a.id, a.item_id, a.layout_id))
        .collect())
}

/// Layouts prepared for rendering, by what they are made of ([`content_key`]): a layout
/// changed, on this node or another, is prepared anew, and the same layout is the same
/// whatever database it came from.
static PREPARED: LazyLock<Mutex<HashMap<[u8; 32], Arc<Prepared>>>> =
    LazyLock::new(Default::default);
/// How many prepared layouts a process keeps.
const PREPARED_KEPT: usize = 64;

fn built_in(kind: Kind) -> Arc<Prepared> {
    static TICKET: LazyLock<Arc<Prepared>> = LazyLock::new(|| prepare_built_in(Kind::Ticket));
    static BADGE: LazyLock<Arc<Prepared>> = LazyLock::new(|| prepare_built_in(Kind::Badge));
    match kind {
        Kind::Ticket => TICKET.clone(),
        Kind::Badge => BADGE.clone(),
    }
}

fn prepare_built_in(kind: Kind) -> Arc<Prepared> {
    // The built-in layouts are constants a test renders.
    let layout = Layout::parse(&kind.built_in()).unwrap_or(Layout { areas: Vec::new() });
    Arc::new(Prepared::new(layout, None, kind.page_mm()))
}

/// A digest of what a prepared layout is made of: its areas, its background (an upload's
/// key, never reused) and its page size.
fn content_key(row: &pdf_layout::Model) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut digest = Sha256::new();
    digest.update(row.layout.to_string());
    digest.update([0]);
    digest.update(row.background.as_deref().unwrap_or_default());
    digest.update(row.width_mm.to_le_bytes());
    digest.update(row.height_mm.to_le_bytes());
    digest.finalize().into()
}

/// The layout a position of `item_id` sold in `channel` is printed with: the one assigned
/// to the product in that channel, else in `web`, else the event's default, else the
/// built-in one; prepared for rendering.
pub async fn prepared_for(
    db: &impl ConnectionTrait,
    cache: Option<(&Cache, u64)>,
    event_id: i64,
    kind: Kind,
    item_id: i64,
    channel: &str,
) -> Result<Arc<Prepared>, DbErr> {
    let (layouts, assigned) = &*of_event(db, cache, event_id, kind).await?;
    if layouts.is_empty() {
        return Ok(built_in(kind));
    }
    let by_channel = |c: &str| {
        assigned
            .iter()
            .find(|a| a.item_id == item_id && a.sales_channel == c)
            .and_then(|a| layouts.iter().find(|l| l.id == a.layout_id))
    };
    let chosen = by_channel(channel)
        .or_else(|| by_channel("web"))
        .or_else(|| layouts.iter().find(|l| l.is_default));
    match chosen {
        Some(l) => prepare(db, l).await,
        None => Ok(built_in(kind)),
    }
}

/// An event's layouts of a kind and their assignments to products.
type EventLayouts = (Vec<pdf_layout::Model>, Vec<pdf_layout_item::Model>);

/// An event's layouts of a kind with their assignments: from the process cache, else read
/// and kept there for this configuration.
async fn of_event(
    db: &impl ConnectionTrait,
    cache: Option<(&Cache, u64)>,
    event_id: i64,
    kind: Kind,
) -> Result<Arc<EventLayouts>, DbErr> {
    let key = format!("layouts:{}:{event_id}", kind.as_str());
    if let Some(kept) = cache.and_then(|(c, g)| c.object::<EventLayouts>(g, &key)) {
        return Ok(kept);
    }
    let layouts = list(db, event_id, kind).await?;
    let assigned = if layouts.is_empty() {
        Vec::new()
    } else {
        let ids: Vec<i64> = layouts.iter().map(|l| l.id).collect();
        pdf_layout_item::Entity::find()
            .filter(pdf_layout_item::Column::LayoutId.is_in(ids))
            .all(db)
            .await?
    };
    let found = Arc::new((layouts, assigned));
    if let Some((c, g)) = cache {
        c.keep_object(g, key, found.clone());
    }
    Ok(found)
}

/// A stored layout prepared for rendering, from the process's store when it holds this
/// version.
pub async fn prepare(
    db: &impl ConnectionTrait,
    row: &pdf_layout::Model,
) -> Result<Arc<Prepared>, DbErr> {
    let key = content_key(row);
    if let Some(kept) = PREPARED.lock().ok().and_then(|m| m.get(&key).cloned()) {
        return Ok(kept);
    }
    let layout = Layout::parse(&row.layout).unwrap_or(Layout { areas: Vec::new() });
    let background = match &row.background {
        Some(reference) => match stored_file(db, reference).await? {
            Some(data) => read_background(data).await.ok(),
            None => None,
        },
        None => None,
    };
    let prepared = Arc::new(Prepared::new(
        layout,
        background,
        (row.width_mm as f32, row.height_mm as f32),
    ));
    if let Ok(mut kept) = PREPARED.lock() {
        if kept.len() >= PREPARED_KEPT {
            kept.clear();
        }
        kept.insert(key, prepared.clone());
    }
    Ok(prepared)
}

/// The PDF of a request's tickets printed with layouts of `kind`: each ticket with the
/// layout chosen for its product and the order's sales channel, all in one file. The
/// drawing is done away from the request threads.
pub async fn render(
    db: &impl ConnectionTrait,
    kind: Kind,
    request: &TicketRequest<'_>,
) -> Result<Vec<u8>, DbErr> {
    let mut chosen: HashMap<i64, Arc<Prepared>> = HashMap::new();
    let mut sheets: Vec<(Arc<Prepared>, Sheet)> = Vec::with_capacity(request.tickets.len());
    for ticket in &request.tickets {
        let item = ticket.position.item_id;
        let prepared = match chosen.get(&item) {
            Some(p) => p.clone(),
            None => {
                let p = prepared_for(
                    db,
                    request.cache,
                    request.event.id,
                    kind,
                    item,
                    &request.order.sales_channel,
                )
                .await?;
                chosen.insert(item, p.clone());
                p
            }
        };
        let sheet = sheet(db, request.event.id, &prepared, ticket, request.now).await?;
        sheets.push((prepared, sheet));
    }
    let title = format!(
        "{} {}",
        match kind {
            Kind::Ticket => "Tickets",
            Kind::Badge => "Badges",
        },
        request.order.code
    );
    draw(sheets, title).await
}

/// The sheet of a ticket printed with `prepared`: its variables, and the pictures its image
/// areas show (the position's image answer to a file question, else its base position's),
/// decoded away from the request threads. A picture that is not a readable JPEG or PNG is
/// left out, and the area shows pretix's placeholder.
pub async fn sheet(
    db: &impl ConnectionTrait,
    event_id: i64,
    prepared: &Prepared,
    ticket: &Ticket<'_>,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Sheet, DbErr> {
    let mut sheet = Sheet::of(ticket, &prepared.locales(), now);
    for content in prepared.image_contents() {
        let file = match file_answers::layout_image(db, event_id, ticket.position, content).await {
            Ok(file) => file,
            Err(Refusal::Db(e)) => return Err(e),
            Err(_) => continue,
        };
        let read = tokio::task::spawn_blocking(move || pdf::Image::read(&file.data)).await;
        if let Ok(Some(image)) = read {
            sheet.images.insert(content.to_owned(), Arc::new(image));
        }
    }
    Ok(sheet)
}

/// Sheets drawn where the request is served: a quarter of a millisecond each, less than
/// handing them to another thread and back costs. More go to the blocking pool, so that an
/// order of many tickets or a batch does not hold up the other requests of its thread.
const INLINE_SHEETS: usize = 2;

/// One PDF of these sheets, each printed with its layout, in this order; more than
/// [`INLINE_SHEETS`] are drawn away from the request threads.
pub async fn draw(sheets: Vec<(Arc<Prepared>, Sheet)>, title: String) -> Result<Vec<u8>, DbErr> {
    let inline = sheets.len() <= INLINE_SHEETS;
    let draw = move || {
        let pairs: Vec<(&Prepared, &dyn pdf::Values)> = sheets
            .iter()
            .map(|(p, s)| (p.as_ref(), s as &dyn pdf::Values))
            .collect();
        pdf::render(&pairs, &title)
    };
    if inline {
        return Ok(draw());
    }
    tokio::task::spawn_blocking(draw)
        .await
        .map_err(|e| DbErr::Custom(format!("rendering failed: {e}")))
}
