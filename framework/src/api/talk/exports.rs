//! The exports of released schedules ([`crate::domain::talk::exports`]): for anyone at
//! `/{event}/schedule/export/{name}` (and `/{event}/schedule.json`, `.xml`, `.ics`) as
//! pretalx serves them, once the event is public and has released a schedule (404 before,
//! as pretalx answers); for organisers of the call for papers at
//! `/api/events/{event}/schedules/{id}/exporters/{name}/`. Answers carry an entity tag
//! (`If-None-Match` gives 304) and allow any origin, as pretalx's; clients that accept gzip
//! get the file compressed (each export is compressed once, when it is made).
//!
//! Also the kept answers of anonymous lists of the current schedule ([`PublicList`]): the
//! public reads the same pages over and over, and they depend only on the schedule.

use poem::http::{HeaderValue, StatusCode, header};
use poem::web::{Data, Path as WebPath};
use poem::{IntoResponse, Request, Response, handler};
use poem_openapi::param::{Path, Query};
use poem_openapi::registry::{MetaMediaType, MetaResponse, MetaResponses, Registry};
use poem_openapi::types::Type;
use poem_openapi::{ApiResponse, OpenApi};
use std::sync::Arc;

use super::TalkTag;
use crate::domain::cache;
use crate::domain::talk::access::{agenda_visible, not_found};
use crate::domain::talk::endpoints::Action;
use crate::domain::talk::exports::{self, Export, Format, Source};
use crate::domain::talk::schedule;
use crate::domain::talk::version;
use crate::http::ApiError;
use crate::http::error::TalkResult;
use crate::http::middleware::original_uri;
use crate::http::pagination;
use crate::http::talk::Talk;
use crate::state::AppState;

/// Where exports are read from and kept.
fn source(state: &AppState) -> Source<'_> {
    Source {
        db: &state.db,
        settings: &state.settings,
        cache: &state.cache,
        public_url: &state.public_url,
    }
}

/// The `lang` query parameter of a request, if any.
fn lang_of(req: &Request) -> Option<String> {
    req.uri().query().and_then(|q| {
        form_urlencoded::parse(q.as_bytes())
            .find(|(k, _)| k == "lang")
            .map(|(_, v)| v.into_owned())
    })
}

/// Whether an `Accept-Encoding` header's value accepts gzip (by name or `*`, with a
/// quality above zero).
fn accepts_gzip(value: &str) -> bool {
    value.split(',').any(|coding| {
        let mut parts = coding.split(';').map(str::trim);
        let name = parts.next().unwrap_or_default();
        let refused = parts.any(|p| {
            p.strip_prefix("q=")
                .and_then(|q| q.trim().parse::<f32>().ok())
                .is_some_and(|q| q <= 0.0)
        });
        ["gzip", "x-gzip", "*"]
            .iter()
            .any(|n| n.eq_ignore_ascii_case(name))
            && !refused
    })
}

/// The answer with an export, compressed with gzip when the client accepts it: 304 when
/// the client's copy is current.
fn answer(req: &Request, export: &Export) -> Response {
    let header_text = |name| req.headers().get(name).and_then(|v| v.to_str().ok());
    let gzip = header_text(header::ACCEPT_ENCODING).is_some_and(accepts_gzip);
    let current = header_text(header::IF_NONE_MATCH).is_some_and(|v| export.matches(v, gzip));
    let mut resp = if current {
        Response::builder()
            .status(StatusCode::NOT_MODIFIED)
            .finish()
    } else {
        let mut builder = Response::builder().content_type(export.format.content_type());
        if export.format.is_attachment() {
            builder = builder.header(
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{}\"", export.filename),
            );
        }
        if gzip {
            builder = builder.header(header::CONTENT_ENCODING, "gzip");
        }
        let body = if gzip { &export.gzip } else { &export.body };
        builder.body(poem::Body::from_bytes(body.clone()))
    };
    if let Ok(etag) = HeaderValue::from_str(export.etag(gzip)) {
        resp.headers_mut().insert(header::ETAG, etag);
    }
    resp.headers_mut()
        .insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    resp.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    resp
}

/// A public export of the current schedule: `/{event}/schedule/export/{name}`, and
/// `/{event}/schedule.json` (`.xml`, `.ics`). 404 for an unknown export, and until the
/// event is public and has released a schedule.
#[handler]
pub async fn public_export(
    req: &Request,
    state: Data<&AppState>,
    WebPath((event, name)): WebPath<(String, String)>,
) -> Response {
    match public(req, &state, &event, &name).await {
        Ok(resp) => resp,
        Err(e) => poem::error::ResponseError::as_response(&e),
    }
}

async fn public(
    req: &Request,
    state: &AppState,
    slug: &str,
    name: &str,
) -> Result<Response, ApiError> {
    let format = Format::named(name).ok_or_else(not_found)?;
    let ev = exports::public_event(&state.db, slug, version::CURRENT)
        .await?
        .filter(agenda_visible)
        .ok_or_else(not_found)?;
    let schedule = ev.current_schedule.ok_or_else(not_found)?;
    let lang = lang_of(req);
    let export = exports::export(source(state), &ev.event, schedule, format, lang.as_deref())
        .await?
        .ok_or_else(not_found)?;
    Ok(answer(req, &export))
}

/// An export's file, documented with its three formats.
pub struct ExportFile(Response);

impl IntoResponse for ExportFile {
    fn into_response(self) -> Response {
        self.0
    }
}

impl ApiResponse for ExportFile {
    fn meta() -> MetaResponses {
        let media = |content_type| MetaMediaType {
            content_type,
            schema: String::schema_ref(),
        };
        MetaResponses {
            responses: vec![
                MetaResponse {
                    description: "The file: frab JSON (`schedule.json`), frab XML \
                                  (`schedule.xml`) or iCalendar (`schedule.ics`, an \
                                  attachment), with its `ETag`.",
                    status: Some(200),
                    status_range: None,
                    content: Format::ALL
                        .into_iter()
                        .map(|f| media(f.content_type()))
                        .collect(),
                    headers: vec![],
                },
                MetaResponse {
                    description: "The copy named by `If-None-Match` is current.",
                    status: Some(304),
                    status_range: None,
                    content: vec![],
                    headers: vec![],
                },
            ],
        }
    }

    fn register(_registry: &mut Registry) {}
}

/// Export operations.
pub struct ExportsApi;

#[OpenApi(tag = "TalkTag::Schedule")]
impl ExportsApi {
    /// A schedule's export
    ///
    /// A released schedule (by ID, or `latest`) as `schedule.json` (frab JSON),
    /// `schedule.xml` (frab XML) or `schedule.ics` (iCalendar), for organisers of the call
    /// for papers; 404 for another name and for the schedule in progress.
    #[oai(
        path = "/api/events/:event/schedules/:id/exporters/:name",
        method = "get"
    )]
    #[allow(clippy::too_many_arguments)]
    async fn schedule_export(
        &self,
        req: &Request,
        state: Data<&AppState>,
        talk: Talk,
        /// The event's slug.
        event: Path<String>,
        /// The schedule's ID, or `latest`.
        id: Path<String>,
        /// `schedule.json`, `schedule.xml` or `schedule.ics`.
        name: Path<String>,
        /// The language of the export's texts, when it is one of the event's (else its
        /// default language).
        lang: Query<Option<String>>,
    ) -> TalkResult<ExportFile> {
        let ev = talk
            .event_for(
                &state.db,
                &event,
                "schedules",
                Action::Actions,
                schedule::may_read,
                schedule::may_write,
            )
            .await?;
        let format = Format::named(&name).ok_or_else(not_found)?;
        let schedule = match id.as_str() {
            "latest" => ev.current_schedule.ok_or_else(not_found)?,
            other => other.parse().map_err(|_| not_found())?,
        };
        let export = exports::export(source(&state), &ev.event, schedule, format, lang.as_deref())
            .await?
            .ok_or_else(not_found)?;
        Ok(ExportFile(answer(req, &export)))
    }
}

/// The kept answer of an anonymous list of the current schedule, or the place to keep it:
/// kept per event, current schedule, API version and URL (with no parameters but `page`,
/// `page_size` and `lang`), for the configuration generation. Other requests (with a
/// token, filters, search, order or expansions, or before the agenda is public) are
/// answered as usual and not kept.
pub struct PublicList {
    generation: u64,
    key: String,
    kept: Option<Arc<[u8]>>,
}

/// The list parameters whose answers are kept.
const KEPT_PARAMS: [&str; 3] = ["page", "page_size", "lang"];

impl PublicList {
    /// The kept answer for an anonymous request of `endpoint` of the event, if the request
    /// may be kept: one query (the event with its current schedule).
    pub async fn find(
        state: &AppState,
        req: &Request,
        talk: &Talk,
        slug: &str,
        endpoint: &str,
    ) -> Result<Option<Self>, ApiError> {
        if talk.caller.is_some() {
            return Ok(None);
        }
        let Some(generation) = state.cache.generation().await else {
            return Ok(None);
        };
        let Some(ev) = exports::public_event(&state.db, slug, talk.version)
            .await?
            .filter(agenda_visible)
        else {
            return Ok(None);
        };
        let uri = original_uri(req);
        let languages = if cache::asks_for_language(&uri) {
            super::lang::event_locales(state, &ev.event).await?
        } else {
            Vec::new()
        };
        let Some(url_key) =
            cache::answer_key("", &uri, &KEPT_PARAMS, &languages, pagination::PAGE_SIZE)
        else {
            return Ok(None);
        };
        let Some(schedule) = ev.current_schedule else {
            return Ok(None);
        };
        let key = format!(
            "talk-public:{endpoint}:{}:{schedule}:{}{url_key}",
            ev.event.id,
            talk.version.name()
        );
        let kept = state.cache.answer(generation, &key);
        Ok(Some(Self {
            generation,
            key,
            kept,
        }))
    }

    /// The kept answer, if any.
    pub fn hit(&self) -> Option<Arc<[u8]>> {
        self.kept.clone()
    }

    /// Keeps the answer made for the request.
    pub fn keep(self, state: &AppState, body: Arc<[u8]>) {
        state.cache.keep_answer(self.generation, self.key, body);
    }
}

#[cfg(test)]
mod tests {
    use super::accepts_gzip;

    #[test]
    fn gzip_is_accepted_by_name_or_any_unless_its_quality_is_zero() {
        assert!(accepts_gzip("gzip, deflate, br"));
        assert!(accepts_gzip("br;q=1.0, GZIP;q=0.5"));
        assert!(accepts_gzip("*"));
        assert!(!accepts_gzip("gzip;q=0"));
        assert!(!accepts_gzip("identity"));
        assert!(!accepts_gzip("deflate, br"));
    }
}
