//! The pages that list events: the installation's front page (`/`, the public events of
//! every organizer) and an organizer's page (`/{organizer}/`, its public events).

use sea_orm::DbErr;
use serde_json::{Value, json};
use tessera::db::entities::{event, organizer};
use tessera::domain::storefront;
use tessera::plugin::pages::{Page, PageAnswer, PageContext, PageRequest};
use tessera::values::texts::LANGUAGES;

use crate::present;

/// The front page.
pub struct FrontPage;

/// An organizer's page.
pub struct OrganizerPage;

#[async_trait::async_trait]
impl Page for FrontPage {
    async fn answer(&self, cx: &PageContext<'_>, req: &PageRequest) -> Result<PageAnswer, DbErr> {
        let lang = req.language(&LANGUAGES.map(str::to_owned));
        let events = storefront::public_events(cx.db, None, tessera::values::now()).await?;
        let listed = listed(&events, &lang);
        Ok(PageAnswer::html(
            "presale/index.html",
            json!({"lang": lang, "events": listed}),
        ))
    }
}

#[async_trait::async_trait]
impl Page for OrganizerPage {
    async fn answer(&self, cx: &PageContext<'_>, req: &PageRequest) -> Result<PageAnswer, DbErr> {
        let lang = req.language(&LANGUAGES.map(str::to_owned));
        let cache = cx.cache.current().await;
        let Some(org) = storefront::organizer(cx.db, cache, req.param("organizer")).await? else {
            return Ok(PageAnswer::not_found());
        };
        let events = storefront::public_events(cx.db, Some(org.id), tessera::values::now()).await?;
        Ok(PageAnswer::html(
            "presale/organizer.html",
            json!({
                "lang": lang,
                "organizer": {"name": org.name, "url": format!("/{}", org.slug)},
                "title": org.name,
                "events": listed(&events, &lang),
            }),
        ))
    }
}

/// Events as a list shows them: name, when, where, link, organizer.
fn listed(events: &[(event::Model, organizer::Model)], lang: &str) -> Vec<Value> {
    events
        .iter()
        .map(|(e, o)| {
            json!({
                "name": present::text(&e.name, lang),
                "date_range": present::date_range(e.date_from, e.date_to, &e.timezone, false, lang),
                "location": present::optional_text(e.location.as_ref(), lang),
                "url": format!("/{}/{}", o.slug, e.slug),
                "organizer": o.name,
            })
        })
        .collect()
}
