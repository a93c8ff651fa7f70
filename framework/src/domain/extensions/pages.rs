//! Pages an extension brings: routes a person reaches in a browser (or a widget on another
//! site reaches), each answered by a [`Page`] from the rules' handles ([`PageContext`]).
//!
//! The port says what a page needs and gives, never how HTTP carries it: the web layer
//! mounts the routes after the core's (a path the core or another extension serves is
//! refused at start), reads the request into a [`PageRequest`] (a posted form's CSRF token
//! already checked, unless the route is a [`Exposure::Widget`] one), and turns the
//! [`PageAnswer`] into a response with the pages' headers, rendering templates in one
//! environment with the core's, so an extension's template can `{% extends "base.html" %}`
//! and translate with `_("...")`.
//!
//! A page's writes reach the process cache (settings, catalogues) when the database
//! announces them, within moments, not before its answer: pages sell and serve buyers, and
//! leave configuration to the API.

use std::collections::BTreeMap;
use std::sync::Arc;

use sea_orm::{DatabaseConnection, DbErr};
use serde_json::Value;

use super::Extensions;
use crate::domain::cache::Cache;
use crate::domain::mail::Mailer;
use crate::domain::orders::{Placements, Seller};
use crate::domain::settings::SettingsRegistry;

/// How a route is requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageMethod {
    /// Reads; never changes anything.
    Get,
    /// A form (or a widget's request) that may change something.
    Post,
}

/// Who may reach a route from elsewhere.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exposure {
    /// This site only: never framed, and a posted form must carry the CSRF token the page
    /// was rendered with.
    Own,
    /// A widget on any site: the answer may be framed and read across origins, and a post
    /// carries no cookie-bound token (the page checks what it trusts itself, and changes
    /// nothing a stranger could not change by hand).
    Widget,
}

/// One route: a path in the router's syntax (`/:organizer/:event/cart/add`), a method,
/// its exposure and the page that answers.
#[derive(Clone)]
pub struct PageRoute {
    /// The path; `:name` segments become [`PageRequest::params`].
    pub path: String,
    /// The method it answers.
    pub method: PageMethod,
    /// Who may reach it.
    pub exposure: Exposure,
    /// What answers it.
    pub page: Arc<dyn Page>,
}

impl PageRoute {
    /// A route of this site's own ([`Exposure::Own`]).
    pub fn own(path: &str, method: PageMethod, page: Arc<dyn Page>) -> Self {
        Self {
            path: path.to_owned(),
            method,
            exposure: Exposure::Own,
            page,
        }
    }

    /// A route a widget reaches from another site ([`Exposure::Widget`]).
    pub fn widget(path: &str, method: PageMethod, page: Arc<dyn Page>) -> Self {
        Self {
            exposure: Exposure::Widget,
            ..Self::own(path, method, page)
        }
    }
}

/// What an extension's pages are: routes, and the templates they render (name and source;
/// a name ending in `.html` is autoescaped).
#[derive(Clone, Default)]
pub struct Pages {
    /// The routes.
    pub routes: Vec<PageRoute>,
    /// The templates, beside the core's (whose names they cannot take).
    pub templates: Vec<(&'static str, &'static str)>,
}

/// The rules' handles a page works with.
#[derive(Clone, Copy)]
pub struct PageContext<'a> {
    /// The connection pool.
    pub db: &'a DatabaseConnection,
    /// What the extensions bring (payment providers, ticket outputs).
    pub plugins: &'a Arc<dyn Extensions>,
    /// Every declared setting.
    pub settings: &'a SettingsRegistry,
    /// The process cache (settings, catalogues).
    pub cache: &'a Cache,
    /// The public base URL, without trailing slash.
    pub public_url: &'a str,
    /// The mail outbox's sender, to wake after a change that queued mail.
    pub mailer: &'a Mailer,
    /// Plain orders waiting to be placed together.
    pub placements: &'a Arc<Placements>,
}

impl<'a> PageContext<'a> {
    /// The order rules' handles, acting for this organizer.
    pub fn seller(&self, organizer: &'a str) -> Seller<'a> {
        Seller {
            db: self.db,
            plugins: &**self.plugins,
            settings: self.settings,
            cache: self.cache,
            public_url: self.public_url,
            organizer,
        }
    }
}

/// A request as a page reads it.
#[derive(Debug, Clone, Default)]
pub struct PageRequest {
    /// The path's `:name` segments, decoded.
    pub params: BTreeMap<String, String>,
    /// The query string's fields, in order.
    pub query: Vec<(String, String)>,
    /// A posted form's fields, in order (empty for a `GET`).
    pub form: Vec<(String, String)>,
    /// The request's cookies.
    pub cookies: BTreeMap<String, String>,
    /// The languages the reader asked for, most wanted first: `?locale=`, then the
    /// `Accept-Language` header's.
    pub languages: Vec<String>,
}

impl PageRequest {
    /// A path parameter (empty when the route has none of that name).
    pub fn param(&self, name: &str) -> &str {
        self.params.get(name).map_or("", String::as_str)
    }

    /// The first query field of that name.
    pub fn query(&self, name: &str) -> Option<&str> {
        first(&self.query, name)
    }

    /// The first form field of that name.
    pub fn field(&self, name: &str) -> Option<&str> {
        first(&self.form, name)
    }

    /// A cookie's value.
    pub fn cookie(&self, name: &str) -> Option<&str> {
        self.cookies.get(name).map(String::as_str)
    }

    /// The language to speak: the first the reader asked for among `offered` (by its
    /// primary subtag too: `de-AT` picks `de`), else the first offered, else English.
    pub fn language(&self, offered: &[String]) -> String {
        for wanted in &self.languages {
            let wanted = wanted.to_ascii_lowercase();
            let primary = wanted.split('-').next().unwrap_or_default();
            if let Some(l) = offered
                .iter()
                .find(|o| o.to_ascii_lowercase() == wanted)
                .or_else(|| offered.iter().find(|o| o.to_ascii_lowercase() == primary))
            {
                return l.clone();
            }
        }
        offered.first().cloned().unwrap_or_else(|| "en".to_owned())
    }
}

fn first<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// A cookie a page sets: HttpOnly, SameSite=Lax, for the whole site (Secure on https).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageCookie {
    /// Its name.
    pub name: String,
    /// Its value (URL-safe characters only).
    pub value: String,
    /// How long it lives, in seconds; 0 removes it.
    pub max_age: i64,
}

/// What a page answers.
#[derive(Debug, Clone)]
pub enum PageBody {
    /// A template rendered with this context; the web layer adds `lang`, `csrf_token`
    /// (the token a form must post as `csrfmiddlewaretoken`) where the context has none.
    Html {
        /// The HTTP status.
        status: u16,
        /// The template's name.
        template: String,
        /// Its context, an object.
        context: Value,
    },
    /// A `303 See Other` to a path on this site.
    Redirect(String),
    /// A JSON document (a widget's data); readable from any site on [`Exposure::Widget`]
    /// routes.
    Json {
        /// The HTTP status.
        status: u16,
        /// The document.
        body: Value,
    },
    /// A script or stylesheet for other sites' pages (a widget's), readable from any site on
    /// [`Exposure::Widget`] routes and kept by browsers for an hour.
    Asset {
        /// Its media type (`text/css; charset=utf-8`).
        media_type: &'static str,
        /// The text.
        body: Arc<str>,
    },
    /// The site's page for an address that leads nowhere.
    NotFound,
}

/// A page's answer: its body and the cookies it sets.
#[derive(Debug, Clone)]
pub struct PageAnswer {
    /// What is answered.
    pub body: PageBody,
    /// Cookies to set.
    pub cookies: Vec<PageCookie>,
}

impl PageAnswer {
    /// A template rendered with status 200.
    pub fn html(template: &str, context: Value) -> Self {
        Self::html_status(200, template, context)
    }

    /// A template rendered with another status (a form's errors: 400).
    pub fn html_status(status: u16, template: &str, context: Value) -> Self {
        PageBody::Html {
            status,
            template: template.to_owned(),
            context,
        }
        .into()
    }

    /// A redirect to a path on this site.
    pub fn redirect(path: impl Into<String>) -> Self {
        PageBody::Redirect(path.into()).into()
    }

    /// JSON with status 200.
    pub fn json(body: Value) -> Self {
        PageBody::Json { status: 200, body }.into()
    }

    /// The site's not-found page.
    pub fn not_found() -> Self {
        PageBody::NotFound.into()
    }

    /// The same answer, also setting a cookie.
    pub fn with_cookie(mut self, name: &str, value: &str, max_age: i64) -> Self {
        self.cookies.push(PageCookie {
            name: name.to_owned(),
            value: value.to_owned(),
            max_age,
        });
        self
    }
}

impl From<PageBody> for PageAnswer {
    fn from(body: PageBody) -> Self {
        Self {
            body,
            cookies: Vec::new(),
        }
    }
}

/// A page: answers a request from the rules. A database failure is the web layer's error
/// page; everything a reader can send is answered by the page itself.
#[async_trait::async_trait]
pub trait Page: Send + Sync + 'static {
    /// The answer to a request.
    async fn answer(&self, cx: &PageContext<'_>, req: &PageRequest) -> Result<PageAnswer, DbErr>;
}

#[cfg(test)]
mod tests {
    use super::PageRequest;

    #[test]
    fn the_language_is_the_first_offered_one_the_reader_asked_for() {
        let offered = vec!["en".to_owned(), "de".to_owned()];
        let asked = |l: &[&str]| PageRequest {
            languages: l.iter().map(|s| (*s).to_owned()).collect(),
            ..Default::default()
        };
        assert_eq!(asked(&["fr", "de-AT", "en"]).language(&offered), "de");
        assert_eq!(asked(&["DE"]).language(&offered), "de");
        assert_eq!(asked(&["fr"]).language(&offered), "en");
        assert_eq!(asked(&[]).language(&[]), "en");
    }
}
