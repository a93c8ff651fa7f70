//! The `/api/v1/` resources, one module per resource group, each an `#[OpenApi]` struct.
//! [`ticketing_api`] lists them all in one place.

pub mod batch_render;
pub mod carts;
pub mod categories;
pub mod checkin;
pub mod device_protocol;
pub mod devices;
pub mod discounts;
pub mod events;
pub mod files;
pub mod giftcards;
pub mod invoices;
pub mod item_parts;
pub mod items;
pub mod layouts;
pub mod meta;
pub mod oauth;
pub mod orders;
pub mod organizers;
pub mod questions;
pub mod quotas;
pub mod resellers;
pub mod sales_channels;
pub mod seating;
mod seats;
pub mod secrets;
pub mod settings;
pub mod subevents;
pub mod talk;
pub mod taxrules;
pub mod team_members;
pub mod teams;
pub mod tickets;
pub mod vouchers;
pub mod waiting_list;
pub mod webhooks;

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
    /// Events, their clones and settings.
    Events,
    /// Item categories of an event.
    Categories,
    /// Tax rules of an event.
    #[oai(rename = "Tax rules")]
    TaxRules,
    /// Dates of an event series.
    #[oai(rename = "Sub-events")]
    SubEvents,
    /// Seating plans and the seats of events.
    Seating,
    /// Items of an event with their variations, add-ons and bundles.
    Items,
    /// Quotas of an event and their availability.
    Quotas,
    /// Questions order positions answer, and their options.
    Questions,
    /// File uploads.
    Files,
    /// Orders, their payments and lifecycle (external checkout).
    Orders,
    /// Cart positions reserved through the API.
    #[oai(rename = "Cart positions")]
    CartPositions,
    /// Vouchers of an event and the quota they block.
    Vouchers,
    /// Automatic discounts of an event.
    Discounts,
    /// People waiting for sold-out products, and the vouchers sent to them.
    #[oai(rename = "Waiting list")]
    WaitingList,
    /// OAuth 2.0 tokens and the profile of the user a token acts for.
    #[oai(rename = "OAuth")]
    OAuth,
    /// Reseller accounts and the organizers they create.
    Resellers,
    /// Scanning devices and gates of an organizer.
    Devices,
    /// What scanning devices call: initialization, token roll and revocation, version.
    #[oai(rename = "Device protocol")]
    DeviceProtocol,
    /// Check-in lists, scanning tickets and the scans made.
    #[oai(rename = "Check-in")]
    Checkin,
    /// Notifications of changes sent to an organizer's receivers, and their calls.
    Webhooks,
}

/// Every operation of the ticketing API (`/api/v1/`).
pub fn ticketing_api() -> impl OpenApi {
    (
        (
            organizers::OrganizersApi,
            sales_channels::SalesChannelsApi,
            teams::TeamsApi,
            team_members::TeamMembersApi,
        ),
        giftcards::GiftCardsApi,
        events::EventsApi,
        settings::SettingsApi,
        meta::MetaPropertiesApi,
        categories::CategoriesApi,
        taxrules::TaxRulesApi,
        subevents::SubEventsApi,
        (seating::SeatingApi, seats::SeatsApi),
        (
            items::ItemsApi,
            item_parts::ItemPartsApi,
            quotas::QuotasApi,
            questions::QuestionsApi,
            files::FilesApi,
            orders::OrdersApi,
            orders::lifecycle::LifecycleApi,
            orders::change::ChangeApi,
            (
                orders::positions::PositionsApi,
                orders::file_answers::FileAnswersApi,
                tickets::TicketsApi,
                batch_render::BatchRenderApi,
                invoices::InvoicesApi,
            ),
            orders::payments::PaymentsApi,
            orders::refunds::RefundsApi,
            carts::CartsApi,
        ),
        (
            (vouchers::VouchersApi, discounts::DiscountsApi),
            waiting_list::WaitingListApi,
            oauth::OAuthApi,
            oauth::AuthorizeApi,
            oauth::ProfileApi,
            resellers::ResellersApi,
            secrets::SecretsApi,
            layouts::LayoutsApi,
        ),
        (devices::DevicesApi, device_protocol::DeviceProtocolApi),
        (
            checkin::ListsApi,
            checkin::PositionsApi,
            checkin::RpcApi,
            checkin::CheckinsApi,
            checkin::SelectionApi,
        ),
        webhooks::WebhooksApi,
    )
}
