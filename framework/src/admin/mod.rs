//! Operator tasks behind `tessera admin ...` and `tessera demo`, callable from tests too.

mod operator;

pub use operator::{ADMIN_TEAM, Bootstrap, Bootstrapped, backup, bootstrap, open, set_password};

use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    QueryFilter, Set,
};

use crate::db::entities::{event, giftcard, giftcard_acceptance, organizer, team};
use crate::domain::categories::{self, CategoryFields};
use crate::domain::extensions::payments::ManualPayment;
use crate::domain::giftcards::{self, NewCard};
use crate::domain::items::{
    self, AddonFields, BundleFields, ItemFields, NewItem, PictureChange, VariationFields,
};
use crate::domain::orders::{self, NewOrder, PlaceContext, PlaceError, PositionInput};
use crate::domain::permissions::PermissionSet;
use crate::domain::questions::{self, OptionFields, QuestionFields};
use crate::domain::quotas::{self, QuotaFields};
use crate::domain::seating::{self, AssignError};
use crate::domain::settings::{self, Scope};
use crate::domain::tax_rules::{self, TaxRuleFields};
use crate::domain::vouchers::{self, PriceMode, manage::VoucherFields};
use crate::domain::waiting_list::{self, EntryFields};
use crate::domain::{events, oauth, slug, teams, tokens, users};
use crate::http::ApiError;
use crate::state::AppState;
use serde_json::json;
use std::sync::Arc;

/// An operator task that could not be done; the message is fit for one line of output.
#[derive(Debug, thiserror::Error)]
pub enum AdminError {
    /// The input was wrong.
    #[error("{0}")]
    Invalid(String),
    /// The database failed.
    #[error("database: {}", crate::db::describe(.0))]
    Db(#[from] DbErr),
}

impl From<items::WriteError> for AdminError {
    fn from(e: items::WriteError) -> Self {
        match e {
            items::WriteError::Invalid(errors) => invalid(
                errors
                    .iter()
                    .map(|(field, message)| format!("{field}: {message}"))
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
            items::WriteError::Gone => invalid("the item was deleted meanwhile"),
            items::WriteError::Db(e) => Self::Db(e),
        }
    }
}

impl From<oauth::ApplicationError> for AdminError {
    fn from(e: oauth::ApplicationError) -> Self {
        match e {
            oauth::ApplicationError::Invalid(m) => Self::Invalid(m),
            oauth::ApplicationError::Db(e) => Self::Db(e),
        }
    }
}

fn invalid(message: impl Into<String>) -> AdminError {
    AdminError::Invalid(message.into())
}

async fn organizer_by_slug(
    db: &DatabaseConnection,
    slug: &str,
) -> Result<organizer::Model, AdminError> {
    organizer::Entity::find()
        .filter(organizer::Column::Slug.eq(slug))
        .one(db)
        .await?
        .ok_or_else(|| invalid(format!("no organizer with slug {slug:?}")))
}

/// Creates an organizer.
pub async fn create_organizer(
    db: &DatabaseConnection,
    slug: &str,
    name: &str,
) -> Result<organizer::Model, AdminError> {
    let txn = crate::db::begin_write(db).await?;
    let org = insert_organizer(&txn, slug, name).await?;
    crate::db::commit(txn).await?;
    Ok(org)
}

/// Checks and inserts an organizer with its built-in sales channels.
async fn insert_organizer(
    txn: &impl ConnectionTrait,
    slug: &str,
    name: &str,
) -> Result<organizer::Model, AdminError> {
    if !slug::is_valid(slug) {
        return Err(invalid(format!(
            "invalid slug {slug:?}: use letters, digits, '-' and '.', starting with a letter or digit"
        )));
    }
    if !slug::is_free_for_organizer(slug) {
        return Err(invalid(format!(
            "the slug {slug:?} is reserved for the service's own pages"
        )));
    }
    if name.trim().is_empty() {
        return Err(invalid("the name must not be empty"));
    }
    if organizer::Entity::find()
        .filter(organizer::Column::Slug.eq(slug))
        .one(txn)
        .await?
        .is_some()
    {
        return Err(invalid(format!(
            "an organizer with slug {slug:?} already exists"
        )));
    }
    let org = organizer::ActiveModel {
        slug: Set(slug.to_owned()),
        name: Set(name.trim().to_owned()),
        created: Set(crate::values::now()),
        ..Default::default()
    }
    .insert(txn)
    .await?;
    crate::domain::sales_channels::create_built_in(txn, org.id).await?;
    Ok(org)
}

/// What a new token's team may do.
#[derive(Debug, Clone, Default)]
pub struct TokenRequest {
    /// Organizer slug.
    pub organizer: String,
    /// Team name; created when missing.
    pub team: String,
    /// Permissions of the team; `None` keeps an existing team's (then the team must exist).
    pub permissions: Option<PermissionSet>,
    /// Event slugs; empty means all events.
    pub events: Vec<String>,
}

/// A token [`create_token`] made, and what it may do.
#[derive(Debug, Clone)]
pub struct CreatedToken {
    /// The token (stored only as a hash).
    pub token: String,
    /// One line: the team, its permissions and its events.
    pub summary: String,
}

/// Creates a token for a team of an organizer, creating the team when it does not exist.
/// An existing team gets the permissions and events asked for, when any are given; a team
/// that does not exist needs its permissions said. The token is stored only as a hash.
pub async fn create_token(
    db: &DatabaseConnection,
    req: &TokenRequest,
) -> Result<CreatedToken, AdminError> {
    let org = organizer_by_slug(db, &req.organizer).await?;
    let event_ids = teams::resolve_event_slugs(db, org.id, &req.events)
        .await?
        .map_err(|missing| {
            invalid(format!(
                "no event with slug {:?} at {}",
                missing.join(", "),
                org.slug
            ))
        })?;
    // The team, its events and the token together, or nothing.
    let txn = crate::db::begin_write(db).await?;
    let existing = team::Entity::find()
        .filter(team::Column::OrganizerId.eq(org.id))
        .filter(team::Column::Name.eq(req.team.as_str()))
        .one(&txn)
        .await?;
    let team = match (existing, req.permissions) {
        (None, None) => {
            return Err(invalid(format!(
                "{} has no team {:?} whose permissions could be kept: say what it may do",
                org.slug, req.team
            )));
        }
        (None, Some(perms)) => {
            let t = teams::new_team(org.id, &req.team, event_ids.is_empty(), perms)
                .insert(&txn)
                .await?;
            teams::set_event_ids(&txn, t.id, &event_ids).await?;
            t
        }
        (Some(t), permissions) if permissions.is_some() || !req.events.is_empty() => {
            let mut row: team::ActiveModel = t.clone().into();
            let perms = permissions.unwrap_or_else(|| teams::permissions(&t));
            for p in crate::domain::permissions::Permission::ALL {
                teams::set_permission(&mut row, p, perms.has(p));
            }
            if !req.events.is_empty() {
                row.all_events = Set(false);
                teams::set_event_ids(&txn, t.id, &event_ids).await?;
            }
            row.update(&txn).await?
        }
        (Some(t), _) => t,
    };
    let (_, token) = teams::create_token(&txn, team.id, "cli").await?;
    crate::db::commit(txn).await?;
    let granted: Vec<&str> = crate::domain::permissions::Permission::ALL
        .iter()
        .filter(|p| teams::permissions(&team).has(**p))
        .map(|p| p.name())
        .collect();
    let events = if team.all_events {
        "all events".to_owned()
    } else if req.events.is_empty() {
        "the team's events".to_owned()
    } else {
        format!("the events {}", req.events.join(", "))
    };
    let may = if granted.is_empty() {
        "nothing (no permission)".to_owned()
    } else {
        granted.join(", ")
    };
    Ok(CreatedToken {
        token,
        summary: format!(
            "created a token of the team {:?} of {}, which may: {may}; on {events}",
            team.name, org.slug
        ),
    })
}

/// A new user, and optionally the team they join.
#[derive(Debug, Clone, Default)]
pub struct UserRequest {
    /// Email address (stored lower-cased).
    pub email: String,
    /// Password (stored as an argon2id hash).
    pub password: String,
    /// Full name.
    pub fullname: String,
    /// Staff of the service.
    pub is_staff: bool,
    /// Organizer slug and team name the user joins; the team is created without permissions
    /// when it does not exist.
    pub team: Option<(String, String)>,
}

/// Creates a user, adding them to a team of an organizer when asked.
pub async fn create_user(
    db: &DatabaseConnection,
    req: &UserRequest,
) -> Result<crate::db::entities::user::Model, AdminError> {
    let team = match &req.team {
        Some((organizer, name)) => Some(team_by_name(db, organizer, name).await?),
        None => None,
    };
    let new = users::NewUser {
        email: req.email.clone(),
        password: req.password.clone(),
        fullname: req.fullname.clone(),
        is_staff: req.is_staff,
        ..Default::default()
    };
    let user = users::create_user(db, new).await.map_err(|e| match e {
        users::CreateError::Db(e) => AdminError::Db(e),
        invalid_fields => invalid(invalid_fields.to_string()),
    })?;
    if let Some(team) = team {
        users::add_to_team(db, user.id, team.id).await?;
    }
    Ok(user)
}

/// The user with this email, or an error naming it.
async fn user_by_email(
    db: &DatabaseConnection,
    email: &str,
) -> Result<crate::db::entities::user::Model, AdminError> {
    users::find_by_email(db, email)
        .await?
        .ok_or_else(|| invalid(format!("no user with email {email:?}")))
}

/// Registers an OAuth application with these redirect URIs, owned by the user with
/// `owner_email` when given; gives its client ID and the client secret (shown only now).
pub async fn create_oauth_app(
    db: &DatabaseConnection,
    name: &str,
    redirect_uris: &[String],
    owner_email: Option<&str>,
) -> Result<(String, String), AdminError> {
    let owner = match owner_email {
        Some(email) => Some(user_by_email(db, email).await?.id),
        None => None,
    };
    let (app, secret) = oauth::create_application(db, name, redirect_uris, owner).await?;
    Ok((app.client_id, secret))
}

/// Creates a reseller account whose users (by email) may use it.
pub async fn create_reseller(
    db: &DatabaseConnection,
    name: &str,
    user_emails: &[String],
) -> Result<crate::db::entities::reseller::Model, AdminError> {
    if name.trim().is_empty() || name.chars().count() > 190 {
        return Err(invalid("the name must have 1 to 190 characters"));
    }
    let mut ids = Vec::with_capacity(user_emails.len());
    for email in user_emails {
        ids.push(user_by_email(db, email).await?.id);
    }
    Ok(crate::domain::resellers::create_reseller(db, name, &ids).await?)
}

/// The team of an organizer with this name, created without permissions when missing.
async fn team_by_name(
    db: &DatabaseConnection,
    organizer: &str,
    name: &str,
) -> Result<team::Model, AdminError> {
    let org = organizer_by_slug(db, organizer).await?;
    if name.trim().is_empty() || name.chars().count() > 190 {
        return Err(invalid("the team name must have 1 to 190 characters"));
    }
    let existing = team::Entity::find()
        .filter(team::Column::OrganizerId.eq(org.id))
        .filter(team::Column::Name.eq(name))
        .one(db)
        .await?;
    Ok(match existing {
        Some(t) => t,
        None => {
            teams::new_team(org.id, name, true, PermissionSet::default())
                .insert(db)
                .await?
        }
    })
}

/// Lets `acceptor` accept the gift cards issued by `issuer`.
pub async fn accept_giftcards(
    db: &DatabaseConnection,
    acceptor: &str,
    issuer: &str,
) -> Result<(), AdminError> {
    let acceptor = organizer_by_slug(db, acceptor).await?;
    let issuer = organizer_by_slug(db, issuer).await?;
    if acceptor.id == issuer.id {
        return Err(invalid("an organizer always accepts its own gift cards"));
    }
    let exists = giftcard_acceptance::Entity::find_by_id((issuer.id, acceptor.id))
        .one(db)
        .await?
        .is_some();
    if !exists {
        giftcard_acceptance::ActiveModel {
            issuer_id: Set(issuer.id),
            acceptor_id: Set(acceptor.id),
        }
        .insert(db)
        .await?;
    }
    Ok(())
}

/// The demo organizer's slug.
pub const DEMO_ORGANIZER: &str = "demo";
/// The demo gift card's secret.
pub const DEMO_GIFTCARD: &str = "DEMO-GIFTCARD";

/// The demo event's slug.
pub const DEMO_EVENT: &str = "democon";
/// The code of the demo event's speaker voucher (free tickets).
pub const DEMO_VOUCHER: &str = "DEMO-SPEAKER";

/// Puts the demo event on sale (scanners only pick live events), as an organizer would once
/// its quotas and payment are set up.
async fn go_live(state: &AppState, e: &event::Model) -> Result<(), AdminError> {
    if e.live {
        return Ok(());
    }
    if let Some(reason) =
        events::live_blocker(&state.db, &*state.plugins, &state.settings, e).await?
    {
        return Err(invalid(format!("the demo event cannot go live: {reason}")));
    }
    let on = "UPDATE events SET live = $1 WHERE id = $2";
    crate::db::execute(&state.db, on, [true.into(), e.id.into()]).await?;
    Ok(())
}

async fn seed_demo_event(state: &AppState, org: &organizer::Model) -> Result<(), AdminError> {
    let (db, organizer_id) = (&state.db, org.id);
    let exists = event::Entity::find()
        .filter(event::Column::OrganizerId.eq(organizer_id))
        .filter(event::Column::Slug.eq(DEMO_EVENT))
        .one(db)
        .await?
        .is_some();
    if exists {
        return Ok(());
    }
    let start = crate::values::now() + chrono::Duration::days(90);
    let row = event::ActiveModel {
        organizer_id: Set(organizer_id),
        slug: Set(DEMO_EVENT.into()),
        name: Set(json!({"en": "DemoCon", "de": "DemoKonferenz"})),
        currency: Set("EUR".into()),
        date_from: Set(start),
        date_to: Set(Some(start + chrono::Duration::days(2))),
        location: Set(Some(json!({"en": "Berlin"}))),
        timezone: Set("Europe/Berlin".into()),
        plugins: Set(json!(
            ["ticketoutputpdf", "badges"]
                .into_iter()
                .filter(|p| state.plugins.knows(p))
                .collect::<Vec<_>>()
        )),
        ..Default::default()
    };
    let demo = events::insert(db, row).await?;
    let tickets = CategoryFields {
        name: json!({"en": "Tickets", "de": "Eintrittskarten"}),
        internal_name: None,
        description: None,
        position: 0,
        is_addon: false,
    };
    let tickets = categories::create(db, demo.id, tickets).await?;
    let vat = TaxRuleFields {
        name: json!({"en": "VAT", "de": "MwSt."}),
        rate_bps: 1900,
        price_includes_tax: true,
        eu_reverse_charge: false,
        home_country: None,
    };
    let vat = tax_rules::create(db, demo.id, vat).await?;
    let ticket = seed_demo_catalogue(db, demo.id, tickets.id, vat.id).await?;
    let layout = json!({
        "name": "Main hall",
        "categories": [{"name": "Stalls"}, {"name": "Balcony"}],
        "zones": [{"name": "Main", "rows": [
            {"row_number": "1", "seats": [
                {"seat_guid": "main-1-1", "seat_number": "1", "category": "Stalls"},
                {"seat_guid": "main-1-2", "seat_number": "2", "category": "Stalls"}
            ]},
            {"row_number": "2", "seats": [{"seat_guid": "main-2-1", "seat_number": "1", "category": "Balcony"}]}
        ]}]
    });
    seating::validate_layout(&layout).map_err(invalid)?;
    let plan = seating::create_plan(db, organizer_id, "Main hall".into(), layout).await?;
    seating::assign(
        db,
        organizer_id,
        seating::SeatScope::event(demo.id),
        Some(plan.id),
        &serde_json::Map::new(),
    )
    .await
    .map_err(|e| match e {
        AssignError::Db(e) => AdminError::Db(e),
        AssignError::Invalid(fields) => invalid(format!("demo seating plan: {fields:?}")),
    })?;
    seed_demo_sales(state, org, &demo, tickets.id, &ticket).await
}

/// The demo event's catalogue: a ticket with variations and an add-on category of shirts,
/// a supporter ticket bundling a shirt, one quota over all of them, and a question. Gives
/// the ticket.
async fn seed_demo_catalogue(
    db: &DatabaseConnection,
    event_id: i64,
    tickets: i64,
    vat: i64,
) -> Result<items::Item, AdminError> {
    let extras = CategoryFields {
        name: json!({"en": "Merchandise", "de": "Fanartikel"}),
        internal_name: None,
        description: None,
        position: 1,
        is_addon: true,
    };
    let extras = categories::create(db, event_id, extras).await?;
    let variation = |en: &str, de: &str, price: Option<i64>, position| VariationFields {
        value: json!({"en": en, "de": de}),
        default_price_cents: price,
        original_price_cents: None,
        active: true,
        description: None,
        position,
    };
    let mut shirt = ItemFields::new(json!({"en": "T-shirt", "de": "T-Shirt"}), 1_500);
    shirt.category_id = Some(extras.id);
    shirt.tax_rule_id = Some(vat);
    let shirt = items::create(
        db,
        event_id,
        NewItem {
            fields: shirt,
            variations: vec![variation("M", "M", None, 0), variation("L", "L", None, 1)],
            addons: Vec::new(),
            bundles: Vec::new(),
        },
        PictureChange::Keep,
    )
    .await?;
    let mut ticket = ItemFields::new(json!({"en": "Ticket", "de": "Eintrittskarte"}), 9_900);
    ticket.category_id = Some(tickets);
    ticket.tax_rule_id = Some(vat);
    ticket.admission = true;
    ticket.description =
        Some(json!({"en": "Two days of **talks**.", "de": "Zwei Tage **Vorträge**."}));
    let addon = AddonFields {
        addon_category_id: extras.id,
        min_count: 0,
        max_count: 2,
        position: 0,
        multi_allowed: false,
        price_included: false,
    };
    let ticket = items::create(
        db,
        event_id,
        NewItem {
            fields: ticket,
            variations: vec![
                variation("Regular", "Normal", None, 0),
                variation("Student", "Ermäßigt", Some(4_900), 1),
            ],
            addons: vec![addon],
            bundles: Vec::new(),
        },
        PictureChange::Keep,
    )
    .await?;
    let mut supporter = ItemFields::new(
        json!({"en": "Supporter ticket", "de": "Förderticket"}),
        15_000,
    );
    supporter.category_id = Some(tickets);
    supporter.tax_rule_id = Some(vat);
    supporter.admission = true;
    supporter.position = 1;
    let bundle = BundleFields {
        bundled_item_id: shirt.row.id,
        bundled_variation_id: shirt.variations.first().map(|v| v.id),
        count: 1,
        designated_price_cents: 1_500,
    };
    let supporter = items::create(
        db,
        event_id,
        NewItem {
            fields: supporter,
            variations: Vec::new(),
            addons: Vec::new(),
            bundles: vec![bundle],
        },
        PictureChange::Keep,
    )
    .await?;
    let all = [&ticket, &shirt, &supporter];
    let quota = QuotaFields {
        name: "Main hall".into(),
        size: Some(200),
        items: all.iter().map(|i| i.row.id).collect(),
        variations: all
            .iter()
            .flat_map(|i| i.variations.iter().map(|v| v.id))
            .collect(),
        subevent_id: None,
        close_when_sold_out: false,
        closed: false,
        release_after_exit: false,
        ignore_for_event_availability: false,
    };
    quotas::create(db, event_id, quota).await?;
    let mut diet = QuestionFields::new(
        json!({"en": "Dietary requirements", "de": "Ernährungswünsche"}),
        questions::CHOICE,
    );
    diet.items = vec![ticket.row.id, supporter.row.id];
    diet.identifier = Some("DIET".into());
    let option = |identifier: &str, en: &str, de: &str, position| OptionFields {
        id: None,
        identifier: Some(identifier.into()),
        answer: json!({"en": en, "de": de}),
        position,
    };
    let options = vec![
        option("NONE", "None", "Keine", 0),
        option("VEGETARIAN", "Vegetarian", "Vegetarisch", 1),
        option("VEGAN", "Vegan", "Vegan", 2),
    ];
    questions::create(db, event_id, diet, options).await?;
    Ok(ticket)
}

/// The demo event's sales: a speaker voucher for free tickets, a workshop with one place,
/// sold to Ada in a paid order with a regular ticket, and Grace waiting for the workshop.
async fn seed_demo_sales(
    state: &AppState,
    org: &organizer::Model,
    demo: &event::Model,
    tickets: i64,
    ticket: &items::Item,
) -> Result<(), AdminError> {
    let db = &state.db;
    let speakers = VoucherFields {
        code: Some(DEMO_VOUCHER.into()),
        max_usages: 20,
        price_mode: PriceMode::Set,
        item_id: Some(ticket.row.id),
        tag: "speakers".into(),
        comment: "Free tickets for our speakers".into(),
        ..VoucherFields::default()
    };
    vouchers::manage::create(db, demo, speakers)
        .await
        .map_err(|e| match e {
            vouchers::manage::WriteError::Db(e) => AdminError::Db(e),
            other => invalid(format!("demo voucher: {other:?}")),
        })?;
    let mut workshop = ItemFields::new(
        json!({"en": "Workshop: async Rust", "de": "Workshop: asynchrones Rust"}),
        4_900,
    );
    workshop.category_id = Some(tickets);
    workshop.position = 2;
    let workshop = NewItem {
        fields: workshop,
        variations: Vec::new(),
        addons: Vec::new(),
        bundles: Vec::new(),
    };
    let workshop = items::create(db, demo.id, workshop, PictureChange::Keep)
        .await?
        .row;
    let room = QuotaFields {
        name: "Workshop room".into(),
        size: Some(1),
        items: vec![workshop.id],
        variations: Vec::new(),
        subevent_id: None,
        close_when_sold_out: false,
        closed: false,
        release_after_exit: false,
        ignore_for_event_availability: false,
    };
    quotas::create(db, demo.id, room).await?;

    let scope = Scope::Event {
        organizer_id: org.id,
        event_id: demo.id,
    };
    let mut on = serde_json::Map::new();
    on.insert("waiting_list_enabled".into(), json!(true));
    on.insert("payment_manual__enabled".into(), json!(true));
    // Buyers download their tickets from the order page.
    on.insert("ticket_download".into(), json!(true));
    // Every order gets an invoice from a German issuer.
    for (key, value) in [
        ("invoice_generate", "True"),
        ("invoice_address_from_name", "Tessera Demo Events GmbH"),
        ("invoice_address_from", "Beispielstraße 1"),
        ("invoice_address_from_zipcode", "10115"),
        ("invoice_address_from_city", "Berlin"),
        ("invoice_address_from_country", "DE"),
        ("invoice_address_from_vat_id", "DE123456789"),
        ("invoice_address_from_phone", "+49 30 1234567"),
        ("contact_mail", "tickets@demo.example"),
    ] {
        on.insert(key.into(), json!(value));
    }
    settings::update(db, &state.settings, scope, &on)
        .await?
        .map_err(|e| invalid(format!("demo settings: {e:?}")))?;
    let values = settings::resolve(db, &state.settings, scope).await?;
    let ctx = PlaceContext {
        public_url: state.public_url.clone(),
        organizer: org.slug.clone(),
        event: demo.clone(),
        settings: Arc::new(values),
        provider: Some(Arc::new(ManualPayment)),
        plugins: state.plugins.clone(),
    };
    let ada = json!({"full_name": "Ada Lovelace"});
    let position = |item, variation| PositionInput {
        item,
        variation,
        attendee_name_parts: ada.as_object().cloned().unwrap_or_default(),
        ..PositionInput::default()
    };
    let order = NewOrder {
        require_approval: false,
        paid: true,
        email: Some("ada@example.org".into()),
        invoice_address: Some(json!({
            "is_business": true, "company": "Analytical Engines Ltd",
            "name_parts": {"full_name": "Ada Lovelace"}, "street": "12 St James's Square",
            "zipcode": "SW1Y 4JH", "city": "London", "country": "GB",
        })),
        sales_channel: "web".into(),
        positions: vec![
            position(ticket.row.id, ticket.variations.first().map(|v| v.id)),
            position(workshop.id, None),
        ],
        ..NewOrder::default()
    };
    orders::place(db, None, None, ctx, order)
        .await
        .map_err(|e| match e {
            PlaceError::Db(e) => AdminError::Db(e),
            PlaceError::Invalid(body) => invalid(format!("demo order: {body}")),
        })?;
    let grace = EntryFields {
        name_parts: Some(json!({"full_name": "Grace Hopper"})),
        email: "grace@example.org".into(),
        phone: None,
        item_id: workshop.id,
        variation_id: None,
        locale: "en".into(),
        subevent_id: None,
        priority: 0,
    };
    waiting_list::create(db, &state.settings, demo, grace)
        .await
        .map_err(|e| match e {
            waiting_list::EntryError::Db(e) => AdminError::Db(e),
            other => invalid(format!("demo waiting list entry: {other:?}")),
        })?;
    Ok(())
}

/// The demo user's email.
pub const DEMO_USER: &str = "demo@example.org";
/// The demo OAuth application's name.
pub const DEMO_APP: &str = "Demo client";
/// The demo application's redirect URI. Nothing listens there: after consent the browser
/// fails to load it, and its address bar shows the code to exchange with curl.
pub const DEMO_REDIRECT_URI: &str = "http://localhost:9999/callback";

/// The address that starts the demo application's OAuth flow in a browser (scope `read`,
/// state `demo`), on the service at `base`.
pub fn demo_authorize_url(base: &str, client_id: &str) -> String {
    let query: String = form_urlencoded::Serializer::new(String::new())
        .append_pair("response_type", "code")
        .append_pair("client_id", client_id)
        .append_pair("scope", "read")
        .append_pair("redirect_uri", DEMO_REDIRECT_URI)
        .append_pair("state", "demo")
        .finish();
    format!("{base}/api/v1/oauth/authorize?{query}")
}

/// What [`seed_demo`] gives: fresh credentials, shown once.
#[derive(Debug, Clone)]
pub struct DemoSeed {
    /// A new API token of the demo organizer's `demo` team, which has every permission.
    pub token: String,
    /// The password of the demo user ([`DEMO_USER`]), new on every run.
    pub password: String,
    /// The client ID of the demo user's OAuth application ([`DEMO_APP`]).
    pub client_id: String,
    /// Its client secret, new on every run.
    pub client_secret: String,
    /// A new read-write user API token of the demo user for the talk side (`/api/`).
    pub talk_token: String,
    /// The initialization token of the demo device ([`DEMO_DEVICE`]) while it is not
    /// initialized.
    pub device_token: Option<String>,
}

/// A new read-write talk-side token of the demo user, for all events.
async fn demo_talk_token(db: &DatabaseConnection) -> Result<String, AdminError> {
    use crate::domain::talk::endpoints::Endpoints;
    use crate::domain::talk::tokens::{self as user_tokens, NewToken, TokenError};
    let user = users::find_by_email(db, DEMO_USER)
        .await?
        .ok_or_else(|| invalid("demo user missing"))?;
    let new = NewToken {
        name: "demo".into(),
        endpoints: Endpoints::all_write(),
        events: None,
        expires: None,
    };
    match user_tokens::create(db, user.id, new).await {
        Ok((_, token)) => Ok(token),
        Err(TokenError::Db(e)) => Err(AdminError::Db(e)),
        Err(other) => Err(invalid(format!("demo talk token: {other}"))),
    }
}

/// Seeds the demo data when missing (an organizer with a gift card, and an event with
/// categories, a tax rule, items, quotas, a seating plan, a voucher, a paid order and a
/// waiting list entry; a user in the organizer's `demo` team, which has every permission,
/// owning an OAuth application) and gives a new token of that team, a new password of the
/// user and a new secret of the application.
pub async fn seed_demo(state: &AppState) -> Result<DemoSeed, AdminError> {
    let db = &state.db;
    let org = match organizer::Entity::find()
        .filter(organizer::Column::Slug.eq(DEMO_ORGANIZER))
        .one(db)
        .await?
    {
        Some(o) => o,
        None => create_organizer(db, DEMO_ORGANIZER, "Demo Organizer").await?,
    };
    let has_card = giftcard::Entity::find()
        .filter(giftcard::Column::IssuerId.eq(org.id))
        .filter(giftcard::Column::Secret.eq(DEMO_GIFTCARD))
        .one(db)
        .await?
        .is_some();
    if !has_card {
        let card = NewCard {
            secret: Some(DEMO_GIFTCARD.into()),
            value_cents: 5_000,
            currency: "EUR".into(),
            testmode: true,
            expires: None,
            conditions: Some("Demo card".into()),
        };
        giftcards::create(db, org.id, card)
            .await
            .map_err(|e| match e {
                giftcards::CreateError::Db(e) => AdminError::Db(e),
                giftcards::CreateError::SecretTaken => invalid("demo gift card secret taken"),
            })?;
    }
    seed_demo_event(state, &org).await?;
    let demo_event = event::Entity::find()
        .filter(event::Column::OrganizerId.eq(org.id))
        .filter(event::Column::Slug.eq(DEMO_EVENT))
        .one(db)
        .await?
        .ok_or_else(|| invalid("demo event missing"))?;
    crate::domain::talk::demo::seed(db, demo_event.id).await?;
    crate::domain::checkin::lists::ensure_named(db, &demo_event, "Entrance").await?;
    go_live(state, &demo_event).await?;
    let request = TokenRequest {
        organizer: DEMO_ORGANIZER.into(),
        team: "demo".into(),
        permissions: Some(PermissionSet::all()),
        events: Vec::new(),
    };
    let token = create_token(db, &request).await?.token;
    let (password, client_id, client_secret) = seed_demo_account(db).await?;
    let talk_token = demo_talk_token(db).await?;
    let user = users::find_by_email(db, DEMO_USER)
        .await?
        .ok_or_else(|| invalid("demo user missing"))?;
    crate::domain::talk::demo::seed_reviews(db, demo_event.id, user.id)
        .await
        .map_err(|e| invalid(format!("demo reviews: {e}")))?;
    let device_token = seed_demo_device(state, &org).await?;
    Ok(DemoSeed {
        token,
        password,
        client_id,
        client_secret,
        talk_token,
        device_token,
    })
}

/// The demo user (created, or given a new password) in the `demo` team, and their OAuth
/// application (created, or given a new secret): the password, the client ID and secret.
async fn seed_demo_account(
    db: &DatabaseConnection,
) -> Result<(String, String, String), AdminError> {
    // Four groups of four letters and digits, without look-alikes (0/o, 1/l).
    let password = (0..4)
        .map(|_| tokens::random_from(b"abcdefghijkmnpqrstuvwxyz23456789", 4))
        .collect::<Vec<_>>()
        .join("-");
    let user = match users::find_by_email(db, DEMO_USER).await? {
        Some(user) => {
            crate::db::entities::user::ActiveModel {
                id: Set(user.id),
                password_hash: Set(users::hash_password(password.clone()).await?),
                active: Set(true),
                ..Default::default()
            }
            .update(db)
            .await?
        }
        None => {
            let request = UserRequest {
                email: DEMO_USER.into(),
                password: password.clone(),
                fullname: "Demo User".into(),
                ..Default::default()
            };
            create_user(db, &request).await?
        }
    };
    let team = team_by_name(db, DEMO_ORGANIZER, "demo").await?;
    users::add_to_team(db, user.id, team.id).await?;
    let existing = oauth::applications_of(db, user.id)
        .await?
        .into_iter()
        .find(|app| app.name == DEMO_APP);
    let (client_id, secret) = match existing {
        Some(app) => {
            let secret = oauth::regenerate_secret(db, &app).await?;
            (app.client_id, secret)
        }
        None => {
            let uris = [DEMO_REDIRECT_URI.to_owned()];
            let (app, secret) =
                oauth::create_application(db, DEMO_APP, &uris, Some(user.id)).await?;
            (app.client_id, secret)
        }
    };
    Ok((password, client_id, secret))
}

/// The outbox's mails, newest first, at most `limit`; only those in `state` (`queued`,
/// `sent` or `failed`) when given.
pub async fn outbox(
    db: &DatabaseConnection,
    state: Option<&str>,
    limit: u64,
) -> Result<Vec<crate::db::entities::outbox_mail::Model>, AdminError> {
    use crate::domain::mail::{self, MailState};
    let state = match state {
        Some(name) => Some(MailState::from_name(name).ok_or_else(|| {
            invalid(format!(
                "unknown state {name:?}; valid: queued, sent, failed"
            ))
        })?),
        None => None,
    };
    Ok(mail::list(db, state, limit).await?)
}

/// One mail of the outbox.
pub async fn outbox_mail(
    db: &DatabaseConnection,
    id: i64,
) -> Result<crate::db::entities::outbox_mail::Model, AdminError> {
    crate::domain::mail::find(db, id)
        .await?
        .ok_or_else(|| invalid(format!("no mail with id {id} in the outbox")))
}

/// Switches the talk side of an organizer's event on or off; gives the event as saved.
/// Switching it on needs a slug no other organizer's event on the talk side has.
pub async fn set_event_talk(
    db: &DatabaseConnection,
    organizer: &str,
    event_slug: &str,
    on: bool,
) -> Result<event::Model, AdminError> {
    let org = organizer_by_slug(db, organizer).await?;
    let found = event::Entity::find()
        .filter(event::Column::OrganizerId.eq(org.id))
        .filter(event::Column::Slug.eq(event_slug))
        .one(db)
        .await?
        .ok_or_else(|| invalid(format!("no event with slug {event_slug:?} at {organizer}")))?;
    let taken = || {
        invalid(format!(
            "another organizer's event on the talk side already uses the slug {event_slug:?}"
        ))
    };
    if on && events::talk_slug_taken(db, found.id, &found.slug).await? {
        return Err(taken());
    }
    let mut row: event::ActiveModel = found.into();
    row.talk_enabled = Set(on);
    row.update(db).await.map_err(|e| {
        if crate::db::is_unique_violation(&e) {
            taken()
        } else {
            e.into()
        }
    })
}

/// A new talk-side user API token, as `tessera admin create-user-token` asks for it.
#[derive(Debug, Clone, Default)]
pub struct UserTokenRequest {
    /// Email of the user the token acts for.
    pub email: String,
    /// The token's name.
    pub name: String,
    /// Every endpoint read-write; else every endpoint read-only.
    pub write: bool,
    /// Slugs of talk-enabled events of the user's teams; empty means all events.
    pub events: Vec<String>,
    /// When it stops working (RFC 3339, or a date and time in UTC); `None` for never.
    pub expires: Option<String>,
}

/// Makes a talk-side API token for a user; gives the token, stored only as a hash. An
/// unknown user or event slug, or an expiry that is not a future date and time, is refused
/// with a message naming it.
pub async fn create_user_token(
    db: &DatabaseConnection,
    req: &UserTokenRequest,
) -> Result<String, AdminError> {
    use crate::domain::talk::tokens as user_tokens;
    let user = user_by_email(db, &req.email).await?;
    let events = if req.events.is_empty() {
        None
    } else {
        let available = user_tokens::available_events(db, user.id).await?;
        let mut ids = Vec::with_capacity(req.events.len());
        for slug in &req.events {
            let found = available.iter().find(|c| c.slug == *slug).ok_or_else(|| {
                invalid(format!(
                    "no event with slug {slug:?} on the talk side among the events of {}'s teams",
                    user.email
                ))
            })?;
            ids.push(found.id);
        }
        Some(ids)
    };
    let expires = match req.expires.as_deref() {
        None => None,
        Some(text) => Some(user_tokens::parse_expires(text).ok_or_else(|| {
            invalid(format!(
                "invalid expiry {text:?}: use e.g. 2030-01-31T18:00:00Z or 2030-01-31 18:00 (UTC)"
            ))
        })?),
    };
    let new = user_tokens::NewToken {
        name: req.name.clone(),
        endpoints: if req.write {
            crate::domain::talk::endpoints::Endpoints::all_write()
        } else {
            crate::domain::talk::endpoints::Endpoints::all_read()
        },
        events,
        expires,
    };
    match user_tokens::create(db, user.id, new).await {
        Ok((_, token)) => Ok(token),
        Err(user_tokens::TokenError::Invalid(errors)) => Err(invalid(
            errors
                .iter()
                .map(|(field, message)| format!("{field}: {message}"))
                .collect::<Vec<_>>()
                .join("; "),
        )),
        Err(user_tokens::TokenError::Db(e)) => Err(e.into()),
    }
}

/// Name of the demo organizer's scanning device.
pub const DEMO_DEVICE: &str = "Entrance scanner";

/// The demo organizer's scanning device (created when missing, for all events, with the
/// `service_checkin` profile); its initialization token while it is not initialized.
async fn seed_demo_device(
    state: &AppState,
    org: &organizer::Model,
) -> Result<Option<String>, AdminError> {
    use crate::db::entities::device;
    let existing = device::Entity::find()
        .filter(device::Column::OrganizerId.eq(org.id))
        .filter(device::Column::Name.eq(DEMO_DEVICE))
        .one(&state.db)
        .await?;
    if let Some(d) = existing {
        return Ok(d.initialization_token.filter(|_| !d.revoked));
    }
    let input = crate::domain::devices::DeviceInput {
        name: DEMO_DEVICE.into(),
        all_events: true,
        event_ids: Vec::new(),
        security_profile: "service_checkin".into(),
        gate_id: None,
        revoked: false,
    };
    let created = crate::domain::devices::create(&state.db, org.id, input)
        .await
        .map_err(|e| invalid(format!("demo device: {}", ApiError::from(e).body())))?;
    Ok(created.device.initialization_token)
}

/// A device to create with `tessera admin create-device`.
#[derive(Debug, Clone, Default)]
pub struct DeviceRequest {
    /// Organizer slug.
    pub organizer: String,
    /// Device name.
    pub name: String,
    /// Slugs of the events it may access; all events when empty.
    pub events: Vec<String>,
    /// Security profile; `full` when not given.
    pub profile: Option<String>,
}

/// A device [`create_device`] made: what provisions it.
#[derive(Debug, Clone)]
pub struct CreatedDevice {
    /// Its number within the organizer.
    pub device_id: i64,
    /// The QR code's content: `{"handshake_version": 1, "url", "token"}`.
    pub payload: serde_json::Value,
    /// The single-use initialization token.
    pub token: String,
}

/// Creates a scanning device (`tessera admin create-device`); `public_url` goes into the
/// QR payload. Unknown organizers, events and profiles and bad names are
/// [`AdminError::Invalid`].
pub async fn create_device(
    db: &DatabaseConnection,
    public_url: &str,
    req: &DeviceRequest,
) -> Result<CreatedDevice, AdminError> {
    use crate::domain::devices::{self, profiles};
    let name = req.name.trim();
    if name.is_empty() || name.chars().count() > 190 {
        return Err(invalid("the device name must have 1 to 190 characters"));
    }
    let org = organizer_by_slug(db, &req.organizer).await?;
    let event_ids = teams::resolve_event_slugs(db, org.id, &req.events)
        .await?
        .map_err(|missing| {
            invalid(format!(
                "no event with slug {:?} at {}",
                missing.join(", "),
                org.slug
            ))
        })?;
    let profile = req
        .profile
        .clone()
        .unwrap_or_else(|| profiles::DEFAULT.into());
    let known = profiles::known_names(Vec::new());
    if !known.contains(&profile) {
        return Err(invalid(format!(
            "unknown security profile {profile:?}; valid: {}",
            known.join(", ")
        )));
    }
    let input = devices::DeviceInput {
        name: name.to_owned(),
        all_events: event_ids.is_empty(),
        event_ids,
        security_profile: profile,
        gate_id: None,
        revoked: false,
    };
    let created = devices::create(db, org.id, input)
        .await
        .map_err(|e| invalid(ApiError::from(e).body().to_string()))?;
    let token = created
        .device
        .initialization_token
        .clone()
        .ok_or_else(|| invalid("the new device has no initialization token"))?;
    Ok(CreatedDevice {
        device_id: created.device.device_id,
        payload: devices::qr_payload(public_url, &token),
        token,
    })
}

/// A QR code of `text` for a terminal: two rows of modules per line of Unicode half
/// blocks, with a quiet zone.
pub fn terminal_qr(text: &str) -> Result<String, AdminError> {
    use qrcode::render::unicode::Dense1x2;
    let code =
        qrcode::QrCode::new(text.as_bytes()).map_err(|e| invalid(format!("QR code: {e}")))?;
    Ok(code
        .render::<Dense1x2>()
        .dark_color(Dense1x2::Light)
        .light_color(Dense1x2::Dark)
        .quiet_zone(true)
        .build())
}
