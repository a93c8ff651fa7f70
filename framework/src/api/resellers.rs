//! The reseller interface, `/api/v1/var/`: reseller accounts of the user an OAuth access
//! token acts for, and the organizers they create. Team API tokens are refused (401); an
//! account that does not exist or the user is not permitted on is 404, as in pretix.

use poem::Request;
use poem::web::Data;
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{Object, OpenApi};

use super::Tag;
use crate::db::entities::reseller;
use crate::domain::resellers::{self, CreateError};
use crate::http::error::{ApiError, ErrorStatuses, Errors};
use crate::http::{Auth, Created, FieldErrors, JsonBody, Page, PageRequest};
use crate::state::AppState;

/// A reseller account.
#[derive(Object)]
#[oai(rename = "ResellerAccount")]
pub struct ResellerOut {
    /// Reseller ID.
    pub id: i64,
    /// Internal name.
    pub name: String,
    /// Name shown to customers.
    pub public_name: String,
    /// Public web site.
    pub public_url: String,
    /// Support mail address.
    pub support_email: String,
    /// Support phone number.
    pub support_phone: String,
    /// Language code for communication.
    pub communication_language: String,
}

impl From<reseller::Model> for ResellerOut {
    fn from(r: reseller::Model) -> Self {
        Self {
            id: r.id,
            name: r.name,
            public_name: r.public_name,
            public_url: r.public_url,
            support_email: r.support_email,
            support_phone: r.support_phone,
            communication_language: r.communication_language,
        }
    }
}

/// A new organizer of a reseller account.
#[derive(Object)]
#[oai(rename = "ResellerOrganizerRequest")]
pub struct NewOrganizerIn {
    /// Display name.
    #[oai(validator(max_length = 200))]
    pub name: String,
    /// Short name used in URLs.
    #[oai(validator(max_length = 50))]
    pub slug: String,
}

/// A created organizer.
#[derive(Object)]
#[oai(rename = "ResellerOrganizer")]
pub struct NewOrganizerOut {
    /// Internal ID.
    pub id: i64,
    /// Display name.
    pub name: String,
    /// Short name used in URLs.
    pub slug: String,
}

/// Errors of the reseller interface: 404 for accounts the user may not see.
pub struct ResellerErrors;
impl ErrorStatuses for ResellerErrors {
    const STATUSES: &'static [u16] = &[400, 401, 403, 404, 429];
}

/// Result of a reseller operation.
type ResellerResult<T> = Result<T, Errors<ResellerErrors>>;

fn missing() -> ApiError {
    ApiError::not_found("Not found.")
}

/// Reseller operations.
pub struct ResellersApi;

/// The user of an OAuth access token whose scope includes `read`; 403 for a token of
/// another scope (`profile` alone reads only `/api/v1/me`).
fn reader(auth: &Auth) -> Result<i64, ApiError> {
    let (user_id, scope) = auth.0.oauth_user()?;
    if scope.read {
        Ok(user_id)
    } else {
        Err(ApiError::forbidden_because(
            "The token's scope does not include read.",
        ))
    }
}

#[OpenApi(tag = "Tag::Resellers")]
impl ResellersApi {
    /// List reseller accounts
    ///
    /// The accounts the token's user is permitted on. Needs an OAuth access token with the
    /// `read` scope.
    #[oai(path = "/api/v1/var", method = "get")]
    async fn list_resellers(
        &self,
        req: &Request,
        state: Data<&AppState>,
        auth: Auth,
        page: Query<Option<String>>,
    ) -> ResellerResult<Json<Page<ResellerOut>>> {
        let user_id = reader(&auth)?;
        let found = PageRequest::new(req, &state.public_url, page.0, None)
            .fetch(&state.db, resellers::of_user(user_id))
            .await?;
        Ok(Json(found.map(ResellerOut::from)))
    }

    /// Show a reseller account
    ///
    /// Needs an OAuth access token with the `read` scope.
    #[oai(path = "/api/v1/var/:id", method = "get")]
    async fn get_reseller(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        id: Path<i64>,
    ) -> ResellerResult<Json<ResellerOut>> {
        let user_id = reader(&auth)?;
        let found = resellers::find_for_user(&state.db, user_id, id.0)
            .await?
            .ok_or_else(missing)?;
        Ok(Json(found.into()))
    }

    /// Create an organizer for a reseller account
    ///
    /// The token's user gets a team with every permission on the new organizer. Needs the
    /// `write` scope.
    #[oai(path = "/api/v1/var/:id/create_organizer", method = "post")]
    async fn create_reseller_organizer(
        &self,
        state: Data<&AppState>,
        auth: Auth,
        id: Path<i64>,
        body: JsonBody<NewOrganizerIn>,
    ) -> ResellerResult<Created<NewOrganizerOut>> {
        let (user_id, scope) = auth.0.oauth_user()?;
        let account = resellers::find_for_user(&state.db, user_id, id.0)
            .await?
            .ok_or_else(missing)?;
        if !scope.write {
            return Err(ApiError::forbidden().into());
        }
        let input = body.0;
        let org =
            resellers::create_organizer(&state.db, &account, user_id, &input.name, &input.slug)
                .await
                .map_err(|e| match e {
                    CreateError::Invalid(errors) => FieldErrors::check(errors)
                        .err()
                        .map_or_else(ApiError::internal, ApiError::from),
                    CreateError::Db(e) => e.into(),
                })?;
        Ok(Created::Created(Json(NewOrganizerOut {
            id: org.id,
            name: org.name,
            slug: org.slug,
        })))
    }
}
