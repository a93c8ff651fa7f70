//! Organizers the caller may see: `/api/v1/organizers/`.

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};

use super::Tag;
use crate::http::auth::OrganizerRef;
use crate::http::error::{ListResult, ReadResult};
use crate::http::{Auth, Page, PageRequest};
use crate::state::AppState;

/// An organizer.
#[derive(Object)]
#[oai(rename = "Organizer")]
pub struct OrganizerOut {
    /// Internal ID.
    pub id: i64,
    /// Display name.
    pub name: String,
    /// Short name used in URLs.
    pub slug: String,
}

impl From<&OrganizerRef> for OrganizerOut {
    fn from(o: &OrganizerRef) -> Self {
        Self {
            id: o.id,
            name: o.name.clone(),
            slug: o.slug.clone(),
        }
    }
}

/// Organizer operations.
pub struct OrganizersApi;

#[OpenApi(tag = "Tag::Organizers")]
impl OrganizersApi {
    /// List organizers
    ///
    /// The organizers the caller has access to, by slug.
    #[oai(path = "/api/v1/organizers", method = "get")]
    async fn list_organizers(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        page: Query<Option<String>>,
        page_size: Query<Option<u64>>,
    ) -> ListResult<Json<Page<OrganizerOut>>> {
        let mut organizers = auth.0.organizers();
        organizers.sort_by(|a, b| a.slug.cmp(&b.slug));
        let page = PageRequest::new(req, &state.public_url, page.0, page_size.0);
        Ok(Json(page.page_of(organizers, OrganizerOut::from)?))
    }

    /// Show an organizer
    #[oai(path = "/api/v1/organizers/:organizer", method = "get")]
    async fn get_organizer(
        &self,
        auth: Auth,
        organizer: Path<String>,
    ) -> ReadResult<Json<OrganizerOut>> {
        let access = auth.0.organizer(&organizer, None)?;
        Ok(Json(OrganizerOut::from(&access.organizer)))
    }
}
