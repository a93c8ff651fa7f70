//! The pages extensions bring ([`crate::domain::extensions::pages`]), on the site: each
//! route is mounted beside the core's, reads its request into a [`PageRequest`] and turns
//! the page's answer into a response with the pages' headers.
//!
//! A path the core serves, or another extension already mounted, is refused at start with
//! one line in the log, as is a template whose name is taken. Routes of this site
//! ([`Exposure::Own`]) have a posted form's CSRF token checked (the double-submit cookie of
//! [`session::login_csrf`]) before the page sees it, and are never framed; widget routes
//! ([`Exposure::Widget`]) may be framed and read from any site.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use minijinja::Environment;
use poem::http::{HeaderValue, Method, StatusCode, header};
use poem::web::Html;
use poem::{Endpoint, EndpointExt, IntoEndpoint, IntoResponse, Request, Response, Route};
use serde_json::Value;

use super::{parse_form, session};
use crate::domain::extensions::pages::{
    Exposure, PageAnswer, PageBody, PageContext, PageMethod, PageRequest, PageRoute, Pages,
};
use crate::state::AppState;
use crate::values::texts;

/// The policy of this site's extension pages: the core pages' policy, plus pictures from
/// this site (uploaded logos and product pictures under `/media/`).
pub const POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; \
     form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The policy of widget frames: as [`POLICY`], but any site may frame them.
pub const WIDGET_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; \
     img-src 'self'; form-action 'self'; frame-ancestors *; base-uri 'none'";

/// The site's routes as they are mounted, remembering which paths are taken, so that an
/// extension's page cannot take one the core serves.
pub struct Site {
    route: Route,
    paths: HashSet<String>,
    prefixes: Vec<String>,
}

impl Default for Site {
    fn default() -> Self {
        Self::new()
    }
}

impl Site {
    /// No routes yet.
    pub fn new() -> Self {
        Self {
            route: Route::new(),
            paths: HashSet::new(),
            prefixes: Vec::new(),
        }
    }

    /// Mounts a core endpoint at a path (as [`Route::at`]).
    pub fn at<E: IntoEndpoint>(mut self, path: &str, ep: E) -> Self
    where
        E::Endpoint: 'static,
    {
        self.paths.insert(shape(path));
        self.route = self.route.at(path, ep);
        self
    }

    /// Mounts a core endpoint under a prefix (as [`Route::nest`]).
    pub fn nest<E: IntoEndpoint>(mut self, prefix: &str, ep: E) -> Self
    where
        E::Endpoint: 'static,
    {
        self.route = self.route.nest(prefix, ep);
        self.prefixes.push(shape(prefix));
        self
    }

    /// Mounts a core endpoint under a prefix, keeping the prefix in the paths it sees (as
    /// [`Route::nest_no_strip`]).
    pub fn nest_no_strip<E: IntoEndpoint>(mut self, prefix: &str, ep: E) -> Self
    where
        E::Endpoint: 'static,
    {
        self.route = self.route.nest_no_strip(prefix, ep);
        self.prefixes.push(shape(prefix));
        self
    }

    /// The routes.
    pub fn into_route(self) -> Route {
        self.route
    }

    /// Whether `path` is free: not a mounted path (whatever its parameters are named) and
    /// not under a kept prefix.
    fn is_free(&self, path: &str) -> bool {
        let path = shape(path);
        !self.paths.contains(&path)
            && !self
                .prefixes
                .iter()
                .any(|p| path == *p || path.starts_with(&format!("{p}/")))
    }

    /// Mounts the pages every plugin brings (see the module's description).
    pub fn with_pages(mut self, all: impl IntoIterator<Item = (String, Pages)>) -> Self {
        let mut templates: Vec<(&'static str, &'static str)> = Vec::new();
        let mut by_path: BTreeMap<String, (String, Vec<PageRoute>)> = BTreeMap::new();
        for (plugin, pages) in all {
            for (name, source) in pages.templates {
                if super::TEMPLATES
                    .iter()
                    .chain(&templates)
                    .any(|(n, _)| *n == name)
                {
                    tracing::error!(
                        plugin,
                        template = name,
                        "page template refused: the name is taken"
                    );
                } else {
                    templates.push((name, source));
                }
            }
            for route in pages.routes {
                let shaped = shape(&route.path);
                let taken = by_path.get(&shaped).is_some_and(|(owner, routes)| {
                    *owner != plugin || routes.iter().any(|r| r.method == route.method)
                });
                if !self.is_free(&route.path)
                    || taken
                    || Route::new()
                        .try_at(&route.path, poem::endpoint::make_sync(|_| ()))
                        .is_err()
                {
                    tracing::error!(
                        plugin,
                        path = route.path,
                        "page refused: the path is taken or invalid"
                    );
                    continue;
                }
                by_path
                    .entry(shaped)
                    .or_insert_with(|| (plugin.clone(), Vec::new()))
                    .1
                    .push(route);
            }
        }
        let env = Arc::new(super::environment(&templates));
        for (shaped, (_, routes)) in by_path {
            let path = routes[0].path.clone();
            let endpoint = PageEndpoint {
                routes: routes.into_iter().map(|r| (names(&r.path), r)).collect(),
                env: env.clone(),
            };
            self.paths.insert(shaped);
            self.route = self.route.at(path, endpoint.map_to_response());
        }
        self
    }
}

/// A path's shape: its parameters unnamed (a pattern kept), so `/:a/x` and `/:b/x` are the
/// same path, and `/:a<\\d+>` another.
fn shape(path: &str) -> String {
    let shaped: Vec<String> = path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| match s.chars().next() {
            Some(':') => format!(":{}", s.find('<').map_or("", |i| &s[i..])),
            Some('*') => "*".to_owned(),
            _ => s.to_owned(),
        })
        .collect();
    format!("/{}", shaped.join("/"))
}

/// The names of a path's parameters.
fn names(path: &str) -> Vec<String> {
    path.split('/')
        .filter_map(|s| s.strip_prefix(':').or_else(|| s.strip_prefix('*')))
        .map(|s| s.split('<').next().unwrap_or(s).to_owned())
        .collect()
}

/// The routes of one path (one per method) and the templates they render.
struct PageEndpoint {
    routes: Vec<(Vec<String>, PageRoute)>,
    env: Arc<Environment<'static>>,
}

impl Endpoint for PageEndpoint {
    type Output = Response;

    async fn call(&self, req: Request) -> poem::Result<Response> {
        let method = if req.method() == Method::POST {
            PageMethod::Post
        } else if req.method() == Method::GET || req.method() == Method::HEAD {
            PageMethod::Get
        } else {
            return Ok(StatusCode::METHOD_NOT_ALLOWED.into_response());
        };
        let Some((names, route)) = self.routes.iter().find(|(_, r)| r.method == method) else {
            return Ok(StatusCode::METHOD_NOT_ALLOWED.into_response());
        };
        let Some(state) = req.data::<AppState>().cloned() else {
            return Ok(StatusCode::INTERNAL_SERVER_ERROR.into_response());
        };
        let (req, mut body) = req.split();
        let mut read = PageRequest {
            params: names
                .iter()
                .filter_map(|n| Some((n.clone(), req.raw_path_param(n)?.to_owned())))
                .collect(),
            query: parse_form(req.uri().query().unwrap_or_default().as_bytes()),
            cookies: cookies(&req),
            ..PageRequest::default()
        };
        read.languages = languages(&req, &read);
        let lang = read.language(&texts::LANGUAGES.map(str::to_owned));
        if method == PageMethod::Post {
            let Ok(bytes) = body.take().map(poem::Body::into_bytes)?.await else {
                return Ok(message(
                    StatusCode::BAD_REQUEST,
                    &lang,
                    "Bad request",
                    "The form could not be read.",
                ));
            };
            read.form = parse_form(&bytes);
            let token = read.field(session::CSRF_FIELD);
            if route.exposure == Exposure::Own && !session::check_login_csrf(&req, token) {
                return Ok(message(
                    StatusCode::FORBIDDEN,
                    &lang,
                    "Forbidden",
                    "The form has expired or did not come from this site. Go back, reload the page and try again.",
                ));
            }
        }
        let cx = PageContext {
            db: &state.db,
            plugins: &state.plugins,
            settings: &state.settings,
            cache: &state.cache,
            public_url: &state.public_url,
            mailer: &state.mailer,
            placements: &state.placements,
        };
        let answer = match route.page.answer(&cx, &read).await {
            Ok(answer) => answer,
            Err(error) => return Ok(super::server_error(error)),
        };
        let mut resp = self.respond(&state, &req, route.exposure, &lang, answer);
        // Pages sell and serve buyers; configuration changes reach the cache by the
        // database's announcement, without a read of the version after every form.
        resp.extensions_mut()
            .insert(crate::http::middleware::LeavesConfiguration);
        Ok(resp)
    }
}

impl PageEndpoint {
    fn respond(
        &self,
        state: &AppState,
        req: &Request,
        exposure: Exposure,
        lang: &str,
        answer: PageAnswer,
    ) -> Response {
        let mut set = Vec::new();
        let mut resp = match answer.body {
            PageBody::Html {
                status,
                template,
                mut context,
            } => {
                if let Value::Object(fields) = &mut context {
                    fields.entry("lang").or_insert_with(|| lang.into());
                    if exposure == Exposure::Own && !fields.contains_key("csrf_token") {
                        let (token, cookie) = session::login_csrf(req, state);
                        fields.insert("csrf_token".into(), token.into());
                        set.extend(cookie);
                    }
                }
                let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
                match self
                    .env
                    .get_template(&template)
                    .and_then(|t| t.render(minijinja::Value::from_serialize(&context)))
                {
                    Ok(html) => (status, Html(html)).into_response(),
                    Err(error) => {
                        tracing::error!(%error, template, "template failed");
                        return message(
                            StatusCode::INTERNAL_SERVER_ERROR,
                            lang,
                            "Error",
                            "Something went wrong on our side. Try again later.",
                        );
                    }
                }
            }
            PageBody::Redirect(to) if super::is_local_path(&to) => Response::builder()
                .status(StatusCode::SEE_OTHER)
                .header(header::LOCATION, to)
                .finish(),
            PageBody::Redirect(to) => {
                tracing::error!(to, "page redirect refused: not a path on this site");
                return message(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    lang,
                    "Error",
                    "Something went wrong on our side. Try again later.",
                );
            }
            PageBody::Json { status, body } => {
                let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
                let mut resp = (status, poem::web::Json(body)).into_response();
                allow_any_origin(&mut resp, exposure);
                resp.headers_mut()
                    .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
                return with_cookies(resp, state, answer.cookies);
            }
            PageBody::Asset { media_type, body } => {
                let mut resp = Response::builder()
                    .content_type(media_type)
                    .header(header::CACHE_CONTROL, "public, max-age=3600")
                    .header(header::X_CONTENT_TYPE_OPTIONS, "nosniff")
                    .body(body.to_string());
                allow_any_origin(&mut resp, exposure);
                return resp;
            }
            PageBody::NotFound => {
                return with_cookies(not_found(lang), state, answer.cookies);
            }
        };
        for cookie in set {
            resp = session::set_cookie(resp, &cookie);
        }
        let resp = match exposure {
            Exposure::Own => super::page_with_policy(resp, POLICY),
            Exposure::Widget => {
                let mut resp = super::page_with_policy(resp, WIDGET_POLICY);
                resp.headers_mut().remove(header::X_FRAME_OPTIONS);
                resp
            }
        };
        with_cookies(resp, state, answer.cookies)
    }
}

fn allow_any_origin(resp: &mut Response, exposure: Exposure) {
    if exposure == Exposure::Widget {
        resp.headers_mut().insert(
            header::ACCESS_CONTROL_ALLOW_ORIGIN,
            HeaderValue::from_static("*"),
        );
    }
}

fn with_cookies(
    mut resp: Response,
    state: &AppState,
    cookies: Vec<crate::domain::extensions::pages::PageCookie>,
) -> Response {
    for c in cookies {
        resp = session::set_cookie(
            resp,
            &session::cookie_header(state, &c.name, &c.value, c.max_age),
        );
    }
    resp
}

/// The site's page for an address that leads nowhere, in the reader's language.
pub fn not_found(lang: &str) -> Response {
    message(
        StatusCode::NOT_FOUND,
        lang,
        "Not found",
        "There is nothing at this address. Check the link, or ask whoever sent it.",
    )
}

/// [`super::message`] in a language.
fn message(status: StatusCode, lang: &str, title: &str, text: &str) -> Response {
    super::message_in(status, lang, title, text)
}

/// Most cookies read from a request.
const MAX_COOKIES: usize = 50;

fn cookies(req: &Request) -> BTreeMap<String, String> {
    req.headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .take(MAX_COOKIES)
        .map(|(k, v)| (k.to_owned(), v.trim().to_owned()))
        .collect()
}

/// Most languages read from a request.
const MAX_LANGUAGES: usize = 10;

/// The reader's language among `offered`, chosen as for plugins' pages.
pub fn language(req: &Request, offered: &[String]) -> String {
    let mut read = PageRequest {
        query: parse_form(req.uri().query().unwrap_or_default().as_bytes()),
        ..PageRequest::default()
    };
    read.languages = languages(req, &read);
    read.language(offered)
}

/// `?locale=` (as pretix's widget sends it), `?lang=`, then `Accept-Language` by weight.
fn languages(req: &Request, read: &PageRequest) -> Vec<String> {
    let mut wanted: Vec<String> = ["locale", "lang"]
        .iter()
        .filter_map(|k| read.query(k))
        .map(str::to_owned)
        .collect();
    let mut weighted: Vec<(f32, String)> = req
        .headers()
        .get(header::ACCEPT_LANGUAGE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .split(',')
        .take(MAX_LANGUAGES)
        .filter_map(|part| {
            let mut bits = part.split(';');
            let tag = bits.next()?.trim();
            let q = bits
                .find_map(|b| b.trim().strip_prefix("q="))
                .and_then(|q| q.parse().ok())
                .unwrap_or(1.0);
            (!tag.is_empty() && tag != "*").then(|| (q, tag.to_owned()))
        })
        .collect();
    weighted.sort_by(|a, b| b.0.total_cmp(&a.0));
    wanted.extend(weighted.into_iter().map(|(_, t)| t));
    wanted.truncate(MAX_LANGUAGES);
    wanted
}

#[cfg(test)]
mod tests {
    use super::{names, shape};

    #[test]
    fn every_message_of_the_pages_speaks_every_language() {
        let source = include_str!("pages.rs");
        let texts: Vec<&str> = source
            .split("message(")
            .skip(1)
            .flat_map(|call| {
                call.split(')')
                    .next()
                    .unwrap_or_default()
                    .split('"')
                    .skip(1)
                    .step_by(2)
            })
            .filter(|t| t.len() > 1)
            .collect();
        assert!(texts.contains(&"Not found"), "{texts:?}");
        for text in texts {
            assert_ne!(crate::values::texts::translate("de", text), text, "{text}");
        }
    }

    #[test]
    fn paths_of_the_same_shape_are_the_same_path() {
        assert_eq!(shape("/:organizer/:event/x"), shape("/:a/:b/x/"));
        assert_ne!(shape("/:organizer/x"), shape("/:organizer/:event"));
        assert_ne!(shape("/:a/:b"), shape("/:a/:b<\\d+>"));
        assert_eq!(
            names("/:organizer/:name<schedule\\.(json)>/*rest"),
            ["organizer", "name", "rest"]
        );
    }
}
