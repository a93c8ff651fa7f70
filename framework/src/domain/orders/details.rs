//! What a support desk changes on an order without touching what it sells, as pretix's
//! `PATCH orders/{code}/`: contact, language, notes, the check-in staff's note, the invoice
//! address, whether pending tickets admit, and the term of a pending order.

use chrono::{DateTime, NaiveDate, Utc};
use sea_orm::{ActiveModelTrait, IntoActiveModel, Set};
use serde_json::{Value, json};

use super::Order;
use super::lifecycle::{LifecycleError, Seller, open};
use crate::db::entities::event;
use crate::domain::questions::is_email;
use crate::domain::settings;
use crate::values::stored::string_list;

/// The changes a PATCH sends; `None` keeps a field, `Some(None)` clears a nullable one.
#[derive(Debug, Default)]
pub struct Details {
    /// Customer e-mail.
    pub email: Option<Option<String>>,
    /// Customer phone.
    pub phone: Option<Option<String>>,
    /// Customer language: one of the event's.
    pub locale: Option<String>,
    /// Internal comment.
    pub comment: Option<String>,
    /// A day to follow the order up.
    pub custom_followup_at: Option<Option<NaiveDate>>,
    /// Whether the check-in staff should look at the tickets.
    pub checkin_attention: Option<bool>,
    /// A text for the check-in staff.
    pub checkin_text: Option<Option<String>>,
    /// The invoice address, as stored; `Some(None)` removes it.
    pub invoice_address: Option<Option<Value>>,
    /// Whether the tickets of a pending order admit.
    pub valid_if_pending: Option<bool>,
    /// Free data of API clients.
    pub api_meta: Option<Value>,
    /// A new end of the payment term, for a pending order (as `extend/` without `force`).
    pub expires: Option<DateTime<Utc>>,
}

/// Changes the details of the order `code` of `ev`: all of them or, with a refusal, none.
/// Refusals name their field, as pretix's (a language the event does not offer, an e-mail
/// address that is none, a term for an order that is not pending).
pub async fn change_details(
    seller: Seller<'_>,
    ev: &event::Model,
    code: &str,
    d: Details,
) -> Result<Order, LifecycleError> {
    let mut l = open(seller, ev, code).await?;
    let values = settings::of_event(&l.txn, seller.settings, None, ev).await?;
    let locales = string_list(values.get("locales").unwrap_or(&Value::Null));
    if let Some(locale) = d.locale.as_ref().filter(|l| !locales.contains(l)) {
        let message = format!("\"{locale}\" is not a supported locale for this event.");
        return Err(invalid("locale", &message));
    }
    if let Some(Some(email)) = &d.email
        && !email.is_empty()
        && !is_email(email)
    {
        return Err(invalid("email", "Enter a valid email address."));
    }
    if let Some(expires) = d.expires {
        if l.order.status != "n" {
            return Err(invalid(
                "expires",
                "Only a pending order's term can be changed.",
            ));
        }
        l.extend_to(expires, false).await?;
    }
    let mut row = l.order.clone().into_active_model();
    macro_rules! set {
        ($($field:ident),*) => {
            $(if let Some(v) = d.$field {
                row.$field = Set(v);
            })*
        };
    }
    set!(
        email,
        phone,
        locale,
        comment,
        custom_followup_at,
        checkin_attention,
        checkin_text,
        invoice_address,
        valid_if_pending,
        api_meta
    );
    row.last_modified = Set(Some(crate::values::now()));
    l.order = row.update(&l.txn).await?;
    l.notify("pretix.event.order.modified", json!({})).await?;
    l.finish(None).await
}

fn invalid(field: &str, message: &str) -> LifecycleError {
    LifecycleError::Invalid(json!({ field: [message] }))
}
