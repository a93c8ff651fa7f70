//! Plain HTML pages for customers: an order's confirmation page and its payment pages,
//! reached through the secret links the API gives out (`url`, `payment_url`).

use poem::error::ResponseError;
use poem::handler;
use poem::http::StatusCode;
use poem::web::{Data, Html, Path};
use poem::{IntoResponse, Response};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use subtle::ConstantTimeEq;

use crate::db::entities::{event, item, item_variation, organizer};
use crate::domain::orders::{self, Order};
use crate::domain::sale::product_name;
use crate::http::Money;
use crate::http::i18n::I18nString;
use crate::state::AppState;

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        Html("<!doctype html><title>Not found</title><p>Not found.</p>"),
    )
        .into_response()
}

/// Finds the order behind a secret link; `None` unless organizer, event, code and secret
/// all match (the secret compared in constant time).
async fn find(
    state: &AppState,
    org: &str,
    ev: &str,
    code: &str,
    secret: &str,
) -> Result<Option<(event::Model, Order)>, sea_orm::DbErr> {
    let Some(o) = organizer::Entity::find()
        .filter(organizer::Column::Slug.eq(org))
        .one(&state.db)
        .await?
    else {
        return Ok(None);
    };
    let Some(e) = event::Entity::find()
        .filter(event::Column::OrganizerId.eq(o.id))
        .filter(event::Column::Slug.eq(ev))
        .one(&state.db)
        .await?
    else {
        return Ok(None);
    };
    let Some(order) = orders::find(&state.db, e.id, code).await? else {
        return Ok(None);
    };
    let matches: bool = order.row.secret.as_bytes().ct_eq(secret.as_bytes()).into();
    Ok(matches.then_some((e, order)))
}

fn status_text(status: &str) -> &'static str {
    match status {
        "p" => "Paid",
        "e" => "Expired",
        "c" => "Canceled",
        _ => "Pending payment",
    }
}

/// Names of the order's items and variations in the order's language.
async fn product_names(state: &AppState, order: &Order) -> Result<Vec<String>, sea_orm::DbErr> {
    let item_ids: Vec<i64> = order.positions.iter().map(|p| p.item_id).collect();
    let items = item::Entity::find()
        .filter(item::Column::Id.is_in(item_ids))
        .all(&state.db)
        .await?;
    let variation_ids: Vec<i64> = order
        .positions
        .iter()
        .filter_map(|p| p.variation_id)
        .collect();
    let variations = item_variation::Entity::find()
        .filter(item_variation::Column::Id.is_in(variation_ids))
        .all(&state.db)
        .await?;
    Ok(order
        .positions
        .iter()
        .map(|p| {
            product_name(
                items.iter().find(|i| i.id == p.item_id),
                variations.iter().find(|v| Some(v.id) == p.variation_id),
                &order.row.locale,
            )
        })
        .collect())
}

/// The confirmation page of an order: its status, tickets and payments.
#[handler]
pub async fn order_page(
    state: Data<&AppState>,
    Path((org, ev, code, secret)): Path<(String, String, String, String)>,
) -> Response {
    match find(&state, &org, &ev, &code, &secret).await {
        Ok(Some((e, order))) => match product_names(&state, &order).await {
            Ok(names) => Html(render_order(&e, &order, &names)).into_response(),
            Err(err) => crate::http::ApiError::from(err).as_response(),
        },
        Ok(None) => not_found(),
        Err(err) => crate::http::ApiError::from(err).as_response(),
    }
}

fn render_order(e: &event::Model, order: &Order, names: &[String]) -> String {
    let o = &order.row;
    let lang = o.locale.as_str();
    let event_name = escape(&I18nString::from_stored(&e.name).localize(lang));
    let rows: String = order
        .positions
        .iter()
        .zip(names)
        .map(|(p, name)| {
            let attendee = orders::display_name(&p.attendee_name_parts).unwrap_or_default();
            format!(
                "<tr><td>{}</td><td>{}</td><td>{} {}</td><td><code>{}</code></td></tr>",
                escape(name),
                escape(&attendee),
                Money(p.price_cents),
                escape(&e.currency),
                escape(&p.secret)
            )
        })
        .collect();
    let payments: String = order
        .payments
        .iter()
        .map(|p| {
            let link = p.details["payment_url"]
                .as_str()
                .filter(|_| p.state == "created")
                .map(|u| format!(" <a href=\"{}\">Pay now</a>", escape(u)))
                .unwrap_or_default();
            format!(
                "<li>{} {} via {}: {}{link}</li>",
                Money(p.amount_cents),
                escape(&e.currency),
                escape(&p.provider),
                escape(&p.state)
            )
        })
        .collect();
    format!(
        "<!doctype html><html lang=\"{lang}\"><head><meta charset=\"utf-8\">\
         <title>Order {code} – {event_name}</title></head><body>\
         <h1>{event_name}</h1><p>Order <strong>{code}</strong>: \
         <span class=\"status\">{status}</span></p>\
         <table><thead><tr><th>Product</th><th>Attendee</th><th>Price</th><th>Ticket</th></tr>\
         </thead><tbody>{rows}</tbody></table>\
         <p>Total: {total} {currency}</p><ul class=\"payments\">{payments}</ul></body></html>",
        lang = escape(lang),
        code = escape(&o.code),
        status = status_text(orders::status(o, chrono::Utc::now())),
        total = Money(o.total_cents),
        currency = escape(&e.currency),
    )
}

/// The page of one payment of an order: what to pay and how.
#[handler]
pub async fn payment_page(
    state: Data<&AppState>,
    Path((org, ev, code, secret, local_id)): Path<(String, String, String, String, i32)>,
) -> Response {
    let (e, order) = match find(&state, &org, &ev, &code, &secret).await {
        Ok(Some(found)) => found,
        Ok(None) => return not_found(),
        Err(err) => return crate::http::ApiError::from(err).as_response(),
    };
    let Some(p) = order.payments.iter().find(|p| p.local_id == local_id) else {
        return not_found();
    };
    let instructions = p.details["instructions"].as_str().unwrap_or_default();
    Html(format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Payment for order {code}</title>\
         </head><body><h1>Payment for order {code}</h1><p>Amount: {amount} {currency}</p>\
         <p class=\"state\">{state}</p><p class=\"instructions\">{instructions}</p>\
         <p><a href=\"{back}\">Back to the order</a></p></body></html>",
        code = escape(&order.row.code),
        amount = Money(p.amount_cents),
        currency = escape(&e.currency),
        state = escape(&p.state),
        instructions = escape(instructions),
        back = escape(&orders::confirmation_page(
            &state.public_url,
            &org,
            &ev,
            &order.row
        )),
    ))
    .into_response()
}
