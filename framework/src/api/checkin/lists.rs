//! Check-in lists of an event: `{event}/checkinlists/`, each list's status and the scans
//! it refused.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::types::MaybeUndefined;
use poem_openapi::{Enum, Object, OpenApi};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use serde_json::Value;

use super::{
    DirectionIo, ReasonIo, SCAN_ANY, VIEW_ANY, find_list, require_any, rules_map, scan_device, yes,
};
use crate::api::Tag;
use crate::db::entities::{item, item_variation};
use crate::domain::checkin::lists::{self, CheckinList, ListFields, ListFilter, ListOrder};
use crate::domain::checkin::redeem::{self};
use crate::domain::checkin::{self as checkin, Direction, NewCheckin};
use crate::domain::permissions::Permission;
use crate::http::error::{DeleteResult, ListResult, ReadResult, WriteResult};
use crate::http::{
    ApiError, Auth, Created, FieldErrors, I18nString, JsonBody, NoContent, Page, PageRequest,
    patched,
};
use crate::state::AppState;
use crate::values::Timestamp;

/// A check-in list.
#[derive(Object)]
#[oai(rename = "CheckinList")]
pub struct ListOut {
    /// Internal ID.
    pub id: i64,
    /// Name.
    pub name: String,
    /// Every product admits (then `limit_products` is ignored).
    pub all_products: bool,
    /// Products that admit.
    pub limit_products: Vec<i64>,
    /// The date of a series the list is for.
    #[oai(nullable)]
    pub subevent: Option<i64>,
    /// Positions the list admits (left out with `exclude=position_count`).
    #[oai(skip_serializing_if_is_none)]
    pub position_count: Option<i64>,
    /// Positions that entered at least once (left out with `exclude=checkin_count`).
    #[oai(skip_serializing_if_is_none)]
    pub checkin_count: Option<i64>,
    /// Pending orders admit too.
    pub include_pending: bool,
    /// A ticket may enter more than once.
    pub allow_multiple_entries: bool,
    /// A ticket may enter again after an exit.
    pub allow_entry_after_exit: bool,
    /// Entry rules in JSON logic.
    pub rules: BTreeMap<String, Value>,
    /// When everyone inside is checked out.
    #[oai(nullable)]
    pub exit_all_at: Option<Timestamp>,
    /// Scanning a parent ticket redeems its matching add-on.
    pub addon_match: bool,
    /// Gates the list is used at.
    pub gates: Vec<i64>,
}

fn list_out(l: CheckinList, counts: Option<(i64, i64)>, exclude: &[String]) -> ListOut {
    let r = l.row;
    let shown = |f: &str| !exclude.iter().any(|e| e == f);
    ListOut {
        id: r.id,
        name: r.name,
        all_products: r.all_products,
        limit_products: l.limit_products,
        subevent: r.subevent_id,
        position_count: counts.map(|c| c.0).filter(|_| shown("position_count")),
        checkin_count: counts.map(|c| c.1).filter(|_| shown("checkin_count")),
        include_pending: r.include_pending,
        allow_multiple_entries: r.allow_multiple_entries,
        allow_entry_after_exit: r.allow_entry_after_exit,
        rules: rules_map(&r.rules),
        exit_all_at: r.exit_all_at.map(Into::into),
        addon_match: r.addon_match,
        gates: l.gates,
    }
}

/// A new check-in list, or all fields of one (PUT).
#[derive(Object)]
pub struct ListCreate {
    /// Name.
    #[oai(validator(min_length = 1, max_length = 190))]
    pub name: String,
    /// Every product admits (default true).
    #[oai(default = "yes")]
    pub all_products: bool,
    /// Products of this event.
    #[oai(default, validator(max_items = 1000))]
    pub limit_products: Vec<i64>,
    /// A date of this event series.
    #[oai(nullable)]
    pub subevent: Option<i64>,
    /// Pending orders admit too.
    #[oai(default)]
    pub include_pending: bool,
    /// A ticket may enter more than once.
    #[oai(default)]
    pub allow_multiple_entries: bool,
    /// A ticket may enter again after an exit (default true).
    #[oai(default = "yes")]
    pub allow_entry_after_exit: bool,
    /// Entry rules in JSON logic (pretix's operators and variables).
    #[oai(default)]
    pub rules: BTreeMap<String, Value>,
    /// When everyone inside is checked out.
    #[oai(nullable)]
    pub exit_all_at: Option<Timestamp>,
    /// Scanning a parent ticket redeems its matching add-on.
    #[oai(default)]
    pub addon_match: bool,
    /// Gates of this organizer.
    #[oai(default, validator(max_items = 1000))]
    pub gates: Vec<i64>,
}

impl From<ListCreate> for ListFields {
    fn from(c: ListCreate) -> Self {
        Self {
            name: c.name,
            all_products: c.all_products,
            limit_products: c.limit_products,
            subevent_id: c.subevent,
            include_pending: c.include_pending,
            allow_multiple_entries: c.allow_multiple_entries,
            allow_entry_after_exit: c.allow_entry_after_exit,
            rules: Value::Object(c.rules.into_iter().collect()),
            exit_all_at: c.exit_all_at.map(Into::into),
            addon_match: c.addon_match,
            gates: c.gates,
        }
    }
}

/// A partial change of a check-in list.
#[derive(Object)]
pub struct ListPatch {
    /// Name.
    #[oai(validator(min_length = 1, max_length = 190))]
    pub name: Option<String>,
    /// Every product admits.
    pub all_products: Option<bool>,
    /// Products of this event.
    #[oai(validator(max_items = 1000))]
    pub limit_products: Option<Vec<i64>>,
    /// A date of this event series.
    #[oai(nullable)]
    pub subevent: MaybeUndefined<i64>,
    /// Pending orders admit too.
    pub include_pending: Option<bool>,
    /// More than one entry.
    pub allow_multiple_entries: Option<bool>,
    /// Entry after exit.
    pub allow_entry_after_exit: Option<bool>,
    /// Entry rules.
    pub rules: Option<BTreeMap<String, Value>>,
    /// When everyone inside is checked out.
    #[oai(nullable)]
    pub exit_all_at: MaybeUndefined<DateTime<Utc>>,
    /// Add-on matching.
    pub addon_match: Option<bool>,
    /// Gates of this organizer.
    #[oai(validator(max_items = 1000))]
    pub gates: Option<Vec<i64>>,
}

impl ListPatch {
    fn apply(self, f: ListFields) -> ListFields {
        ListFields {
            name: self.name.unwrap_or(f.name),
            all_products: self.all_products.unwrap_or(f.all_products),
            limit_products: self.limit_products.unwrap_or(f.limit_products),
            subevent_id: patched(self.subevent).unwrap_or(f.subevent_id),
            include_pending: self.include_pending.unwrap_or(f.include_pending),
            allow_multiple_entries: self
                .allow_multiple_entries
                .unwrap_or(f.allow_multiple_entries),
            allow_entry_after_exit: self
                .allow_entry_after_exit
                .unwrap_or(f.allow_entry_after_exit),
            rules: self
                .rules
                .map_or(f.rules, |r| Value::Object(r.into_iter().collect())),
            exit_all_at: patched(self.exit_all_at).unwrap_or(f.exit_all_at),
            addon_match: self.addon_match.unwrap_or(f.addon_match),
            gates: self.gates.unwrap_or(f.gates),
        }
    }
}

/// Order of the list resource; a leading `-` reverses it.
#[derive(Enum, Clone, Copy)]
pub enum ListOrdering {
    /// By date of the series, name, ID (default).
    #[oai(rename = "subevent__date_from")]
    SubeventDate,
    /// Reversed.
    #[oai(rename = "-subevent__date_from")]
    SubeventDateDesc,
    /// By ID.
    #[oai(rename = "id")]
    Id,
    /// By ID, descending.
    #[oai(rename = "-id")]
    IdDesc,
    /// By name.
    #[oai(rename = "name")]
    Name,
    /// By name, descending.
    #[oai(rename = "-name")]
    NameDesc,
}

impl ListOrdering {
    fn order(self) -> (ListOrder, bool) {
        use ListOrdering as O;
        match self {
            O::SubeventDate => (ListOrder::SubeventDate, false),
            O::SubeventDateDesc => (ListOrder::SubeventDate, true),
            O::Id => (ListOrder::Id, false),
            O::IdDesc => (ListOrder::Id, true),
            O::Name => (ListOrder::Name, false),
            O::NameDesc => (ListOrder::Name, true),
        }
    }
}

/// Counts of a variation on a list.
#[derive(Object)]
pub struct VariationStatus {
    /// The variation.
    pub id: i64,
    /// Its name.
    pub value: I18nString,
    /// Positions that entered at least once.
    pub checkin_count: i64,
    /// Positions the list admits.
    pub position_count: i64,
}

/// Counts of a product on a list.
#[derive(Object)]
pub struct ItemStatus {
    /// The product.
    pub id: i64,
    /// Its name.
    pub name: I18nString,
    /// Whether it admits to the event.
    pub admission: bool,
    /// Positions that entered at least once.
    pub checkin_count: i64,
    /// Positions the list admits.
    pub position_count: i64,
    /// Per variation.
    pub variations: Vec<VariationStatus>,
}

/// The event of a list's status.
#[derive(Object)]
pub struct StatusEvent {
    /// The event's (or the list's date's) name.
    pub name: I18nString,
}

/// How many entered and how many are inside.
#[derive(Object)]
pub struct ListStatus {
    /// The event.
    pub event: StatusEvent,
    /// Positions that entered at least once.
    pub checkin_count: i64,
    /// Positions the list admits.
    pub position_count: i64,
    /// Positions whose last scan is an entry.
    pub inside_count: i64,
    /// Per product.
    pub items: Vec<ItemStatus>,
}

/// A refused scan a device reports.
#[derive(Object, Clone)]
pub struct FailedCheckin {
    /// Why it was refused.
    pub error_reason: ReasonIo,
    /// More about why.
    #[oai(default, nullable, validator(max_length = 10000))]
    pub error_explanation: Option<String>,
    /// What was scanned.
    #[oai(validator(max_length = 4000))]
    pub raw_barcode: String,
    /// When (now when not sent).
    #[oai(default, nullable)]
    pub datetime: Option<Timestamp>,
    /// Entry or exit (entry when not sent).
    #[oai(rename = "type")]
    pub direction: Option<DirectionIo>,
    /// The position, when known.
    #[oai(default, nullable)]
    pub position: Option<i64>,
    /// The product read from the ticket.
    #[oai(default, nullable)]
    pub raw_item: Option<i64>,
    /// The variation read from the ticket.
    #[oai(default, nullable)]
    pub raw_variation: Option<i64>,
    /// The date read from the ticket.
    #[oai(default, nullable)]
    pub raw_subevent: Option<i64>,
}

fn write_error(e: lists::WriteError) -> ApiError {
    match e {
        lists::WriteError::Invalid(invalid) => match FieldErrors::check(invalid) {
            Err(e) => e.into(),
            Ok(()) => ApiError::internal(),
        },
        lists::WriteError::Gone => ApiError::forbidden(),
        lists::WriteError::Db(e) => e.into(),
    }
}

/// Check-in lists: create, read, change and delete them, their status and failed scans.
pub struct ListsApi;

#[OpenApi(tag = "Tag::Checkin")]
impl ListsApi {
    /// List check-in lists
    ///
    /// By date of the series, name and ID unless `ordering` says otherwise. `subevent_match`
    /// keeps lists of that date or of none; `ends_after` lists whose date ends (or starts)
    /// then or later; `exclude=checkin_count&exclude=position_count` leaves the counts out
    /// (and skips counting). Needs `can_view_orders` or `can_checkin_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/checkinlists",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn list_checkinlists(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
        subevent: Query<Option<i64>>,
        subevent_match: Query<Option<i64>>,
        ends_after: Query<Option<DateTime<Utc>>>,
        ordering: Query<Option<ListOrdering>>,
        exclude: Query<Vec<String>>,
    ) -> ListResult<Json<Page<ListOut>>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        require_any(&ev, &VIEW_ANY)?;
        if exclude.0.len() > 50 {
            return Err(ApiError::field("exclude", "Too many fields.").into());
        }
        let filter = ListFilter {
            subevent: subevent.0,
            subevent_match: subevent_match.0,
            ends_after: ends_after.0,
        };
        let (order, desc) = ordering.0.unwrap_or(ListOrdering::SubeventDate).order();
        let all = lists::list(&state.db, ev.event.id, &filter, order, desc).await?;
        let window = PageRequest::new(req, &state.public_url, page.0, page_size.0)
            .window(all.len() as u64)?;
        let counting = ["checkin_count", "position_count"]
            .iter()
            .any(|f| !exclude.0.iter().any(|e| e == f));
        let mut results = Vec::new();
        for l in all
            .into_iter()
            .skip(window.offset as usize)
            .take(window.limit as usize)
        {
            let counts = if counting {
                Some(lists::totals(&state.db, l.row.id).await?)
            } else {
                None
            };
            results.push(list_out(l, counts, &exclude.0));
        }
        Ok(Json(window.page(results)))
    }

    /// Show a check-in list
    ///
    /// Needs `can_view_orders` or `can_checkin_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/checkinlists/:id",
        method = "get"
    )]
    async fn get_checkinlist(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<ListOut>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        require_any(&ev, &VIEW_ANY)?;
        let l = find_list(&state, ev.event.id, *id).await?;
        let counts = lists::totals(&state.db, l.row.id).await?;
        Ok(Json(list_out(l, Some(counts), &[])))
    }

    /// Create a check-in list
    ///
    /// Products must be of this event, the date of this series, gates of this organizer and
    /// the rules pretix's JSON logic. Needs `can_change_event_settings`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/checkinlists",
        method = "post"
    )]
    async fn create_checkinlist(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        body: JsonBody<ListCreate>,
    ) -> WriteResult<Created<ListOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeEventSettings),
            )
            .await?;
        let saved = lists::create(&state.db, &ev.event, body.0.into())
            .await
            .map_err(write_error)?;
        Ok(Created::Created(Json(list_out(saved, Some((0, 0)), &[]))))
    }

    /// Replace a check-in list
    ///
    /// Needs `can_change_event_settings`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/checkinlists/:id",
        method = "put"
    )]
    async fn put_checkinlist(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<ListCreate>,
    ) -> WriteResult<Json<ListOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeEventSettings),
            )
            .await?;
        let existing = find_list(&state, ev.event.id, *id).await?;
        let counts = lists::totals(&state.db, existing.row.id).await?;
        let saved = lists::update(&state.db, &ev.event, existing.row.id, body.0.into())
            .await
            .map_err(write_error)?;
        Ok(Json(list_out(saved, Some(counts), &[])))
    }

    /// Change a check-in list
    ///
    /// Needs `can_change_event_settings`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/checkinlists/:id",
        method = "patch"
    )]
    async fn patch_checkinlist(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<ListPatch>,
    ) -> WriteResult<Json<ListOut>> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeEventSettings),
            )
            .await?;
        let existing = find_list(&state, ev.event.id, *id).await?;
        let counts = lists::totals(&state.db, existing.row.id).await?;
        let fields = body.0.apply(ListFields::of(&existing));
        let saved = lists::update(&state.db, &ev.event, existing.row.id, fields)
            .await
            .map_err(write_error)?;
        Ok(Json(list_out(saved, Some(counts), &[])))
    }

    /// Delete a check-in list
    ///
    /// Its check-ins are deleted with it. Needs `can_change_event_settings`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/checkinlists/:id",
        method = "delete"
    )]
    async fn delete_checkinlist(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> DeleteResult<NoContent> {
        let ev = auth
            .0
            .event(
                &state.db,
                &organizer,
                &event,
                Some(Permission::ChangeEventSettings),
            )
            .await?;
        let existing = find_list(&state, ev.event.id, *id).await?;
        lists::delete(&state.db, ev.event.id, existing.row.id).await?;
        Ok(NoContent::NoContent)
    }

    /// Show how many entered
    ///
    /// Positions the list admits, those that entered at least once, those inside now, per
    /// product and variation. Needs `can_view_orders` or `can_checkin_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/checkinlists/:id/status",
        method = "get"
    )]
    async fn checkinlist_status(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
    ) -> ReadResult<Json<ListStatus>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        require_any(&ev, &VIEW_ANY)?;
        let l = find_list(&state, ev.event.id, *id).await?;
        let counts = lists::counts(&state.db, l.row.id).await?;
        let mut items = item::Entity::find()
            .filter(item::Column::EventId.eq(ev.event.id))
            .order_by_asc(item::Column::Position)
            .order_by_asc(item::Column::Id)
            .all(&state.db)
            .await?;
        if !l.row.all_products {
            items.retain(|i| l.limit_products.contains(&i.id));
        }
        let item_ids: Vec<i64> = items.iter().map(|i| i.id).collect();
        let variations = item_variation::Entity::find()
            .filter(item_variation::Column::ItemId.is_in(item_ids))
            .order_by_asc(item_variation::Column::Position)
            .order_by_asc(item_variation::Column::Id)
            .all(&state.db)
            .await?;
        let name = match l.row.subevent_id {
            Some(s) => crate::db::entities::subevent::Entity::find_by_id(s)
                .one(&state.db)
                .await?
                .map_or_else(|| ev.event.name.clone(), |s| s.name),
            None => ev.event.name.clone(),
        };
        let sum = |f: &dyn Fn(&lists::CountRow) -> bool, g: fn(&lists::CountRow) -> i64| {
            counts.iter().filter(|c| f(c)).map(g).sum::<i64>()
        };
        let items = items
            .into_iter()
            .map(|i| ItemStatus {
                id: i.id,
                name: I18nString::from_stored(&i.name),
                admission: i.admission,
                checkin_count: sum(&|c| c.item_id == i.id, |c| c.checkin_count),
                position_count: sum(&|c| c.item_id == i.id, |c| c.position_count),
                variations: variations
                    .iter()
                    .filter(|v| v.item_id == i.id)
                    .map(|v| VariationStatus {
                        id: v.id,
                        value: I18nString::from_stored(&v.value),
                        checkin_count: sum(&|c| c.variation_id == Some(v.id), |c| c.checkin_count),
                        position_count: sum(&|c| c.variation_id == Some(v.id), |c| {
                            c.position_count
                        }),
                    })
                    .collect(),
            })
            .collect();
        Ok(Json(ListStatus {
            event: StatusEvent {
                name: I18nString::from_stored(&name),
            },
            checkin_count: sum(&|_| true, |c| c.checkin_count),
            position_count: sum(&|_| true, |c| c.position_count),
            inside_count: sum(&|_| true, |c| c.inside_count),
            items,
        }))
    }

    /// Report a refused scan
    ///
    /// Stores an unsuccessful check-in a scanner made offline, with the device's gate, and
    /// answers 201 with what was sent. Without `position`, `raw_barcode` is looked up among
    /// the event's secrets. Needs `can_checkin_orders` or `can_change_orders`.
    #[oai(
        path = "/api/v1/organizers/:organizer/events/:event/checkinlists/:id/failed_checkins",
        method = "post"
    )]
    async fn failed_checkins(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        organizer: Path<String>,
        event: Path<String>,
        id: Path<i64>,
        body: JsonBody<FailedCheckin>,
    ) -> WriteResult<Created<FailedCheckin>> {
        let ev = auth.0.event(&state.db, &organizer, &event, None).await?;
        require_any(&ev, &SCAN_ANY)?;
        let l = find_list(&state, ev.event.id, *id).await?;
        let f = body.0;
        let position = match f.position {
            Some(p) => {
                let found = redeem::positions_where(
                    &state.db,
                    "p.id = $1 AND o.event_id = $2",
                    vec![p.into(), ev.event.id.into()],
                )
                .await?;
                if found.is_empty() {
                    return Err(ApiError::field(
                        "position",
                        format!("Invalid pk \"{p}\" - object does not exist."),
                    )
                    .into());
                }
                Some(p)
            }
            None => redeem::positions_where(
                &state.db,
                "p.secret = $1 AND o.event_id = $2",
                vec![f.raw_barcode.clone().into(), ev.event.id.into()],
            )
            .await?
            .first()
            .map(|p| p.id),
        };
        let device = scan_device(&auth.0);
        let new = NewCheckin {
            list_id: l.row.id,
            position_id: position,
            successful: false,
            direction: f.direction.map_or(Direction::Entry, Into::into),
            datetime: f.datetime.map_or_else(crate::values::now, Into::into),
            nonce: None,
            forced: true,
            error_reason: Some(f.error_reason.as_str().to_owned()),
            error_explanation: f.error_explanation.clone(),
            raw_barcode: Some(f.raw_barcode.clone()),
            raw_item: f.raw_item,
            raw_variation: f.raw_variation,
            raw_subevent: f.raw_subevent,
            gate_id: device.and_then(|d| d.gate_id),
            device_id: device.map(|d| d.id),
            auto_checked_in: false,
        };
        crate::db::in_transaction(&state.db, async |txn| checkin::insert(txn, &new).await).await?;
        Ok(Created::Created(Json(f)))
    }
}
