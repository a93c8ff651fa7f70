//! The `/api/v1/` resources, one module per resource group, each an `#[OpenApi]` struct.
//! [`ticketing_api`] lists them all in one place.

pub mod giftcards;
pub mod organizers;
pub mod seating;
pub mod teams;

use poem_openapi::{OpenApi, Tags};

/// Groups of operations in the OpenAPI document.
#[derive(Tags)]
pub enum Tag {
    /// Organizers the caller may see.
    Organizers,
    /// Teams, their permissions and API tokens.
    Teams,
    /// Gift cards and their transactions.
    #[oai(rename = "Gift cards")]
    GiftCards,
    /// Seating plans and the seats of events.
    Seating,
}

/// Every operation of the ticketing API (`/api/v1/`).
pub fn ticketing_api() -> impl OpenApi {
    (
        organizers::OrganizersApi,
        teams::TeamsApi,
        giftcards::GiftCardsApi,
        seating::SeatingApi,
    )
}
