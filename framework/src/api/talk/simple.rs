//! One skeleton for the talk-side resources that are rows of one table of an event (tags,
//! tracks, session types, and others like them): list, show, create, PUT, PATCH, delete and
//! the activity log, each in one function generic over [`Resource`]. A resource states only
//! what is its own: its table and columns, how a row reads and shows, what its bodies
//! change, its checks and its rules; its `#[OpenApi]` operations (which carry the paths and
//! the documentation) call these functions, written once by `forwarding_api!` where a
//! resource has all of them as they are.
//!
//! One rule for bodies: POST and PUT take the same body ([`Resource::Write`]), whose
//! required fields are set and whose omitted optional ones keep their values on PUT (as
//! pretalx's non-partial updates do) or take their defaults on creation
//! ([`Resource::defaults`]); PATCH ([`Resource::Patch`]) changes the fields it sends. A
//! resource shares its optional fields between both bodies with `#[oai(flatten)]`.
//!
//! Every write runs in one transaction with its log entry, and reads what it changes
//! there: the row is locked first (`FOR UPDATE` on PostgreSQL; SQLite's write transactions
//! are exclusive), and on PostgreSQL so is the event's row, so that checks against the
//! event's other rows (a name used once) hold until the write commits.

use std::future::Future;

use poem::Request;
use poem_openapi::types::Type;
use sea_orm::{ConnectionTrait, DatabaseTransaction, DbBackend, DbErr, QueryResult};
use serde::Serialize;
use serde_json::Value;

use super::context::{Ctx, Listing, keys_in};
use super::expand::{Expand, Kind, Loaded};
use super::lang::event_locales;
use super::log::{LogEntry, log_page};
use super::shape::Shaped;
use crate::db::lock_clause;
use crate::domain::talk::access::{TalkEvent, not_found};
use crate::domain::talk::endpoints::Action;
use crate::domain::talk::log::{self as talk_log, Change};
use crate::http::talk::Talk;
use crate::http::{ApiError, Page};
use crate::state::AppState;

/// A talk-side resource whose objects are rows of one table with `id` and `event_id`
/// columns. See the module's documentation for what the skeleton does with it.
pub trait Resource: Sized + Send + Sync + 'static {
    /// The token scope's endpoint, e.g. `tags`.
    const ENDPOINT: &'static str;
    /// The object type of the log (`tessera.{OBJECT}.update`), e.g. `tag`.
    const OBJECT: &'static str;
    /// The table, e.g. `talk_tags`.
    const TABLE: &'static str;
    /// The columns the API reads and writes besides `id` and `event_id`, in the order of
    /// [`Resource::values`].
    const COLUMNS: &'static [&'static str];
    /// `?q=`: the SQL expressions searched, on the table as `t` (e.g. `t.tag`).
    const SEARCH: &'static [&'static str];
    /// `?o=`: the names a list may be ordered by and their SQL expressions on the table as
    /// `t`; the default order is `t.id`.
    const ORDER: &'static [(&'static str, &'static str)];
    /// Its objects for `?expand=` and for answers: a static whose `load` is
    /// [`load::<Self>`](load).
    const KIND: &'static Kind;

    /// The type that documents an object as the API shows it.
    type Out: Type;
    /// The stored columns as the resource uses them; serialized, they are the log's data.
    type Fields: Serialize + Send + Sync;
    /// The body of POST and PUT.
    type Write: Send;
    /// The body of PATCH.
    type Patch: Send;

    /// Who may list and show its objects.
    fn may_read(ev: &TalkEvent) -> bool;
    /// Who may create, change and delete them.
    fn may_write(ev: &TalkEvent) -> bool;

    /// The fields of a new object before its body is applied. Fields a body must send may
    /// hold anything here.
    fn defaults() -> Self::Fields;
    /// Applies a POST or PUT body: sets the fields it must send and those of the optional
    /// ones it sends.
    fn write(body: Self::Write, f: &mut Self::Fields);
    /// Applies a PATCH body: sets the fields it sends.
    fn patch(body: Self::Patch, f: &mut Self::Fields);

    /// Reads a row's [`Resource::COLUMNS`].
    fn from_row(row: &QueryResult) -> Result<Self::Fields, DbErr>;
    /// The values of [`Resource::COLUMNS`], in their order.
    fn values(f: Self::Fields) -> Vec<sea_orm::Value>;
    /// The object as the API shows it (multi-language strings through [`Ctx::text`]).
    fn shown(ctx: &Ctx<'_>, id: i64, f: Self::Fields) -> Value;

    /// Checks the fields before they are written (`id` is `None` for a new object), in the
    /// write's transaction: 400 with field errors for what is wrong.
    fn check(
        w: &Writing<'_>,
        id: Option<i64>,
        f: &Self::Fields,
    ) -> impl Future<Output = Result<(), ApiError>> + Send {
        let _ = (w, id, f);
        async { Ok(()) }
    }

    /// The rules of a deletion, in its transaction, with the row locked: 400 when the
    /// object may not be deleted.
    fn check_deletion(
        w: &Writing<'_>,
        id: i64,
        f: &Self::Fields,
    ) -> impl Future<Output = Result<(), ApiError>> + Send {
        let _ = (w, id, f);
        async { Ok(()) }
    }

    /// The answer when a write breaks a unique index of the table (two writes at once
    /// that each passed [`Resource::check`]).
    fn duplicate() -> ApiError {
        ApiError::bad_request("An object with these values exists already.")
    }
}

/// A write under way: what [`Resource::check`] and [`Resource::check_deletion`] read with.
pub struct Writing<'a> {
    /// The application.
    pub state: &'a AppState,
    /// The event, as the caller sees it.
    pub ev: &'a TalkEvent,
    /// The write's transaction.
    pub txn: &'a DatabaseTransaction,
    /// A context reading in the transaction.
    pub ctx: Ctx<'a>,
}

impl Writing<'_> {
    /// The event's main language (its first), which tells names apart.
    pub async fn main_locale(&self) -> Result<String, ApiError> {
        Ok(event_locales(self.state, &self.ev.event)
            .await?
            .into_iter()
            .next()
            .unwrap_or_else(|| "en".into()))
    }
}

/// The query parameters of a list.
#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    /// `?q=`: text to search.
    pub q: Option<String>,
    /// `?o=`: the order.
    pub o: Option<String>,
    /// `?lang=`: the language to flatten multi-language strings to.
    pub lang: Option<String>,
    /// `?page=`: the page number, or `last`.
    pub page: Option<String>,
    /// `?page_size=`: objects per page.
    pub page_size: Option<u64>,
}

/// Loads objects of `R` by ID: the [`Kind::load`] of its [`Resource::KIND`]; one query for
/// any number.
pub fn load<'a, R: Resource>(ctx: &'a Ctx<'a>, keys: &'a [Value]) -> Loaded<'a> {
    Box::pin(async move {
        let (ids, mut values) = keys_in(keys);
        values.push(ctx.event_id().into());
        let sql = format!(
            "SELECT id, {} FROM {} WHERE id IN {ids} AND event_id = ${}",
            R::COLUMNS.join(", "),
            R::TABLE,
            values.len()
        );
        ctx.rows(&sql, values)
            .await?
            .iter()
            .map(|row| {
                let id: i64 = row.try_get("", "id")?;
                Ok(R::shown(ctx, id, R::from_row(row)?))
            })
            .collect()
    })
}

/// The event of a request on `R` for `action`: 404, 403 or 401 as
/// [`crate::domain::talk::access::TalkCaller::event_for`] says.
pub async fn event<R: Resource>(
    state: &AppState,
    talk: &Talk,
    slug: &str,
    action: Action,
) -> Result<TalkEvent, ApiError> {
    Ok(talk
        .event_for(
            &state.db,
            slug,
            R::ENDPOINT,
            action,
            R::may_read,
            R::may_write,
        )
        .await?)
}

/// A page of the event's objects, searched and ordered as asked.
pub async fn list<R: Resource>(
    state: &AppState,
    talk: &Talk,
    req: &Request,
    slug: &str,
    query: ListQuery,
) -> Result<Page<Shaped<R::Out>>, ApiError> {
    let ev = event::<R>(state, talk, slug, Action::List).await?;
    let ctx = Ctx::new(state, &ev, query.lang.as_deref()).await?;
    let from = format!("{} t", R::TABLE);
    let mut listing = Listing::new(&from, "t.id", "t.event_id", ev.event.id, "t.id");
    listing
        .search(query.q.as_deref(), R::SEARCH)
        .order(query.o.as_deref(), R::ORDER);
    listing
        .fetch(
            &ctx,
            R::KIND,
            req,
            query.page,
            query.page_size,
            &Expand::default(),
        )
        .await
}

/// One object.
pub async fn get<R: Resource>(
    state: &AppState,
    talk: &Talk,
    slug: &str,
    id: i64,
    lang: Option<&str>,
) -> Result<Shaped<R::Out>, ApiError> {
    let ev = event::<R>(state, talk, slug, Action::Retrieve).await?;
    let ctx = Ctx::new(state, &ev, lang).await?;
    ctx.one(R::KIND, id.into(), &Expand::default()).await
}

/// Creates an object from a POST body.
pub async fn create<R: Resource>(
    state: &AppState,
    talk: &Talk,
    slug: &str,
    body: R::Write,
) -> Result<Shaped<R::Out>, ApiError> {
    let ev = event::<R>(state, talk, slug, Action::Create).await?;
    save::<R>(state, &ev, None, |f| R::write(body, f)).await
}

/// Changes an object by a PUT body: omitted optional fields keep their values.
pub async fn replace<R: Resource>(
    state: &AppState,
    talk: &Talk,
    slug: &str,
    id: i64,
    body: R::Write,
) -> Result<Shaped<R::Out>, ApiError> {
    let ev = event::<R>(state, talk, slug, Action::Update).await?;
    save::<R>(state, &ev, Some(id), |f| R::write(body, f)).await
}

/// Changes an object by a PATCH body.
pub async fn change<R: Resource>(
    state: &AppState,
    talk: &Talk,
    slug: &str,
    id: i64,
    body: R::Patch,
) -> Result<Shaped<R::Out>, ApiError> {
    let ev = event::<R>(state, talk, slug, Action::Update).await?;
    save::<R>(state, &ev, Some(id), |f| R::patch(body, f)).await
}

/// Deletes an object, when its rules ([`Resource::check_deletion`]) allow it, with its
/// log entry.
pub async fn delete<R: Resource>(
    state: &AppState,
    talk: &Talk,
    slug: &str,
    id: i64,
) -> Result<(), ApiError> {
    let ev = event::<R>(state, talk, slug, Action::Destroy).await?;
    let ctx = Ctx::new(state, &ev, None).await?;
    let txn = crate::db::begin_write(&state.db).await?;
    let w = Writing {
        state,
        ev: &ev,
        txn: &txn,
        ctx: ctx.within(&txn),
    };
    let f = locked::<R>(&w, id).await?;
    R::check_deletion(&w, id, &f).await?;
    crate::db::execute(
        &txn,
        &format!("DELETE FROM {} WHERE id = $1", R::TABLE),
        [id.into()],
    )
    .await?;
    let data = serde_json::to_value(&f).unwrap_or_default();
    talk_log::write(&txn, Change::new(&ev, R::OBJECT, id, "delete", data)).await?;
    drop(w);
    crate::db::commit(txn).await?;
    Ok(())
}

/// A page of an object's activity log, newest first.
#[allow(clippy::too_many_arguments)]
pub async fn log<R: Resource>(
    state: &AppState,
    talk: &Talk,
    req: &Request,
    slug: &str,
    id: i64,
    page: Option<String>,
    page_size: Option<u64>,
) -> Result<Page<LogEntry>, ApiError> {
    let ev = event::<R>(state, talk, slug, Action::Retrieve).await?;
    let ctx = Ctx::new(state, &ev, None).await?;
    let found = ctx
        .rows(
            &format!(
                "SELECT id FROM {} WHERE id = $1 AND event_id = $2",
                R::TABLE
            ),
            vec![id.into(), ev.event.id.into()],
        )
        .await?;
    if found.is_empty() {
        return Err(not_found().into());
    }
    log_page(state, req, &ev, R::OBJECT, id, page, page_size).await
}

/// The stored fields of object `id` of the event, its row locked until the transaction
/// ends (PostgreSQL); 404 when the event has none.
async fn locked<R: Resource>(w: &Writing<'_>, id: i64) -> Result<R::Fields, ApiError> {
    let sql = format!(
        "SELECT {} FROM {} WHERE id = $1 AND event_id = $2{}",
        R::COLUMNS.join(", "),
        R::TABLE,
        lock_clause(w.txn)
    );
    let row = w
        .ctx
        .rows(&sql, vec![id.into(), w.ev.event.id.into()])
        .await?
        .pop()
        .ok_or_else(not_found)?;
    Ok(R::from_row(&row)?)
}

/// Writes an object (new when `id` is `None`) as `edit` changes its stored fields (or the
/// defaults), after its checks, with its log entry, in one transaction; gives it as the
/// API shows it.
async fn save<R: Resource>(
    state: &AppState,
    ev: &TalkEvent,
    id: Option<i64>,
    edit: impl FnOnce(&mut R::Fields),
) -> Result<Shaped<R::Out>, ApiError> {
    let ctx = Ctx::new(state, ev, None).await?;
    let txn = crate::db::begin_write(&state.db).await?;
    let w = Writing {
        state,
        ev,
        txn: &txn,
        ctx: ctx.within(&txn),
    };
    // The event's row first, then the object's: writes of the event's objects of any
    // kind run one after the other on PostgreSQL.
    if txn.get_database_backend() == DbBackend::Postgres {
        crate::db::execute(
            &txn,
            "SELECT id FROM events WHERE id = $1 FOR NO KEY UPDATE",
            [ev.event.id.into()],
        )
        .await?;
    }
    let mut f = match id {
        Some(id) => locked::<R>(&w, id).await?,
        None => R::defaults(),
    };
    edit(&mut f);
    R::check(&w, id, &f).await?;
    let data = serde_json::to_value(&f).unwrap_or_default();
    let mut values = vec![ev.event.id.into()];
    values.extend(R::values(f));
    let duplicate = |e: DbErr| {
        if crate::db::is_unique_violation(&e) {
            R::duplicate()
        } else {
            e.into()
        }
    };
    let (id, action) = match id {
        Some(id) => {
            let set: Vec<String> = R::COLUMNS
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{c} = ${}", i + 2))
                .collect();
            let sql = format!(
                "UPDATE {} SET {} WHERE event_id = $1 AND id = ${}",
                R::TABLE,
                set.join(", "),
                values.len() + 1
            );
            values.push(id.into());
            crate::db::execute(&txn, &sql, values)
                .await
                .map_err(duplicate)?;
            (id, "update")
        }
        None => {
            let placeholders: Vec<String> = (1..=values.len()).map(|i| format!("${i}")).collect();
            let sql = format!(
                "INSERT INTO {} (event_id, {}) VALUES ({}) RETURNING id",
                R::TABLE,
                R::COLUMNS.join(", "),
                placeholders.join(", ")
            );
            let id = crate::db::insert_returning_id(&txn, &sql, values)
                .await
                .map_err(duplicate)?;
            (id, "create")
        }
    };
    talk_log::write(&txn, Change::new(ev, R::OBJECT, id, action, data)).await?;
    let out = w.ctx.one(R::KIND, id.into(), &Expand::default()).await?;
    drop(w);
    crate::db::commit(txn).await?;
    Ok(out)
}

/// The `#[OpenApi]` block of a resource whose operations are this module's functions: list,
/// show, create, change (PATCH), replace (PUT), delete and the activity log. The resource
/// gives its paths, its types and the documentation of each operation and parameter; the
/// operations are the same for every such resource. `tag` is the documentation's tag; with
/// `lang: lang;` listing and showing take the `lang` query that flattens multi-language
/// strings.
macro_rules! forwarding_api {
    (
        $(#[doc = $api_doc:tt])*
        $api:ident for $res:ty => $out:ty, $write:ty, $patch:ty;
        tag: $tag:tt;
        $(lang: $lang:ident;)?
        paths: $list_path:tt, $one_path:tt, $log_path:tt;
        $(#[doc = $list_doc:tt])* list $list_fn:ident(q: $q_doc:tt, o: $o_doc:tt $(,)?);
        $(#[doc = $get_doc:tt])* get $get_fn:ident(id: $id_doc:tt);
        $(#[doc = $create_doc:tt])* create $create_fn:ident;
        $(#[doc = $patch_doc:tt])* patch $patch_fn:ident;
        $(#[doc = $put_doc:tt])* put $put_fn:ident;
        $(#[doc = $delete_doc:tt])* delete $delete_fn:ident;
        $(#[doc = $log_doc:tt])* log $log_fn:ident;
    ) => {
        $(#[doc = $api_doc])*
        pub struct $api;

        #[poem_openapi::OpenApi(tag = $tag)]
        impl $api {
            $(#[doc = $list_doc])*
            #[oai(path = $list_path, method = "get")]
            #[allow(clippy::too_many_arguments)]
            async fn $list_fn(
                &self,
                req: &poem::Request,
                state: poem::web::Data<&crate::state::AppState>,
                talk: crate::http::talk::Talk,
                /// The event's slug.
                event: poem_openapi::param::Path<String>,
                #[doc = $q_doc]
                q: poem_openapi::param::Query<Option<String>>,
                #[doc = $o_doc]
                o: poem_openapi::param::Query<Option<String>>,
                $(
                    /// Flattens multi-language strings to this language where it is one of the event's.
                    $lang: poem_openapi::param::Query<Option<String>>,
                )?
                /// Page number, or `last`.
                page: poem_openapi::param::Query<Option<String>>,
                /// Objects per page, at most 50.
                page_size: poem_openapi::param::Query<Option<u64>>,
            ) -> crate::http::error::TalkResult<
                poem_openapi::payload::Json<
                    crate::http::Page<crate::api::talk::shape::Shaped<$out>>,
                >,
            > {
                let query = crate::api::talk::simple::ListQuery {
                    q: q.0,
                    o: o.0,
                    lang: None $(.or($lang.0))?,
                    page: page.0,
                    page_size: page_size.0,
                };
                Ok(poem_openapi::payload::Json(
                    crate::api::talk::simple::list::<$res>(&state, &talk, req, &event, query)
                        .await?,
                ))
            }

            $(#[doc = $get_doc])*
            #[oai(path = $one_path, method = "get")]
            async fn $get_fn(
                &self,
                state: poem::web::Data<&crate::state::AppState>,
                talk: crate::http::talk::Talk,
                /// The event's slug.
                event: poem_openapi::param::Path<String>,
                #[doc = $id_doc]
                id: poem_openapi::param::Path<i64>,
                $(
                    /// Flattens multi-language strings to this language where it is one of the event's.
                    $lang: poem_openapi::param::Query<Option<String>>,
                )?
            ) -> crate::http::error::TalkResult<
                poem_openapi::payload::Json<crate::api::talk::shape::Shaped<$out>>,
            > {
                let lang: Option<String> = None $(.or($lang.0))?;
                Ok(poem_openapi::payload::Json(
                    crate::api::talk::simple::get::<$res>(
                        &state,
                        &talk,
                        &event,
                        *id,
                        lang.as_deref(),
                    )
                    .await?,
                ))
            }

            $(#[doc = $create_doc])*
            #[oai(path = $list_path, method = "post")]
            async fn $create_fn(
                &self,
                state: poem::web::Data<&crate::state::AppState>,
                talk: crate::http::talk::Talk,
                /// The event's slug.
                event: poem_openapi::param::Path<String>,
                body: crate::http::JsonBody<$write>,
            ) -> crate::http::error::TalkResult<
                crate::http::Created<crate::api::talk::shape::Shaped<$out>>,
            > {
                Ok(crate::http::Created::Created(poem_openapi::payload::Json(
                    crate::api::talk::simple::create::<$res>(&state, &talk, &event, body.0)
                        .await?,
                )))
            }

            $(#[doc = $patch_doc])*
            #[oai(path = $one_path, method = "patch")]
            async fn $patch_fn(
                &self,
                state: poem::web::Data<&crate::state::AppState>,
                talk: crate::http::talk::Talk,
                /// The event's slug.
                event: poem_openapi::param::Path<String>,
                #[doc = $id_doc]
                id: poem_openapi::param::Path<i64>,
                body: crate::http::JsonBody<$patch>,
            ) -> crate::http::error::TalkResult<
                poem_openapi::payload::Json<crate::api::talk::shape::Shaped<$out>>,
            > {
                Ok(poem_openapi::payload::Json(
                    crate::api::talk::simple::change::<$res>(&state, &talk, &event, *id, body.0)
                        .await?,
                ))
            }

            $(#[doc = $put_doc])*
            #[oai(path = $one_path, method = "put")]
            async fn $put_fn(
                &self,
                state: poem::web::Data<&crate::state::AppState>,
                talk: crate::http::talk::Talk,
                /// The event's slug.
                event: poem_openapi::param::Path<String>,
                #[doc = $id_doc]
                id: poem_openapi::param::Path<i64>,
                body: crate::http::JsonBody<$write>,
            ) -> crate::http::error::TalkResult<
                poem_openapi::payload::Json<crate::api::talk::shape::Shaped<$out>>,
            > {
                Ok(poem_openapi::payload::Json(
                    crate::api::talk::simple::replace::<$res>(&state, &talk, &event, *id, body.0)
                        .await?,
                ))
            }

            $(#[doc = $delete_doc])*
            #[oai(path = $one_path, method = "delete")]
            async fn $delete_fn(
                &self,
                state: poem::web::Data<&crate::state::AppState>,
                talk: crate::http::talk::Talk,
                /// The event's slug.
                event: poem_openapi::param::Path<String>,
                #[doc = $id_doc]
                id: poem_openapi::param::Path<i64>,
            ) -> crate::http::error::TalkResult<crate::http::NoContent> {
                crate::api::talk::simple::delete::<$res>(&state, &talk, &event, *id).await?;
                Ok(crate::http::NoContent::NoContent)
            }

            $(#[doc = $log_doc])*
            #[oai(path = $log_path, method = "get")]
            #[allow(clippy::too_many_arguments)]
            async fn $log_fn(
                &self,
                req: &poem::Request,
                state: poem::web::Data<&crate::state::AppState>,
                talk: crate::http::talk::Talk,
                /// The event's slug.
                event: poem_openapi::param::Path<String>,
                #[doc = $id_doc]
                id: poem_openapi::param::Path<i64>,
                /// Page number, or `last`.
                page: poem_openapi::param::Query<Option<String>>,
                /// Objects per page, at most 50.
                page_size: poem_openapi::param::Query<Option<u64>>,
            ) -> crate::http::error::TalkResult<
                poem_openapi::payload::Json<crate::http::Page<crate::api::talk::log::LogEntry>>,
            > {
                Ok(poem_openapi::payload::Json(
                    crate::api::talk::simple::log::<$res>(
                        &state,
                        &talk,
                        req,
                        &event,
                        *id,
                        page.0,
                        page_size.0,
                    )
                    .await?,
                ))
            }
        }
    };
}

pub(crate) use forwarding_api;
