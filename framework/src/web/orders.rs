//! Plain HTML pages for customers: an order's confirmation page and its payment pages,
//! reached through the secret links the API gives out (`url`, `payment_url`).

use poem::error::ResponseError;
use std::sync::Arc;

use poem::handler;
use poem::http::StatusCode;
use poem::web::{Data, Html};
use poem::{IntoResponse, Request, Response};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};

use crate::db::entities::{event, item, item_variation};
use crate::domain::cache::EventSettings;
use crate::domain::orders::ticket::TicketNames;
use crate::domain::orders::{self, Order, self_service};
use crate::domain::sale::product_name;
use crate::domain::{invoices, settings, tickets};
use crate::http::Money;
use crate::state::AppState;
use crate::values::i18n::I18nString;
use crate::values::texts;

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// The policy of every order page: nothing but the document itself may load (the pages
/// have no styles, scripts or images), no form may post anywhere, and no other site may
/// frame it.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; form-action 'none'; \
     frame-ancestors 'none'; base-uri 'none'";

/// Adds the protective headers of every page to `resp`, whatever its status, with
/// [`CONTENT_SECURITY_POLICY`]. The page's URL is the order's only credential: the headers
/// keep it out of caches and out of the `Referer` sent when following a link such as a
/// payment provider's.
pub(super) fn protect(resp: Response) -> Response {
    super::page_with_policy(resp, CONTENT_SECURITY_POLICY)
}

pub(super) fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        Html("<!doctype html><title>Not found</title><p>Not found.</p>"),
    )
        .into_response()
}

/// Finds the order behind a secret link ([`orders::by_link`]).
pub(super) async fn find(
    state: &AppState,
    org: &str,
    ev: &str,
    code: &str,
    secret: &str,
) -> Result<Option<(event::Model, Order)>, sea_orm::DbErr> {
    orders::by_link(&state.db, [org, ev, code, secret]).await
}

/// The language of an order's pages: the one `?locale=` names when the service writes it
/// (pretix's widget and links pass it), else the order's.
pub(super) fn reader_language(req: &Request, order_locale: &str) -> &'static str {
    let asked = req.uri().query().and_then(|q| {
        form_urlencoded::parse(q.as_bytes())
            .find(|(k, _)| k == "locale")
            .and_then(|(_, v)| texts::supported(&v))
    });
    asked.unwrap_or_else(|| texts::language(order_locale))
}

/// An order's status for people (English; the page translates it), as pretix's: an order
/// canceled down to a cancellation fee has no positions left.
fn status_text(status: &str, fee_only: bool) -> &'static str {
    match (status, fee_only) {
        ("p", true) => "Canceled (paid fee)",
        ("n", true) => "Canceled (fee not yet paid)",
        ("p", _) => "Paid",
        ("e", _) => "Expired",
        ("c", _) => "Canceled",
        _ => "Pending payment",
    }
}

/// A fee's name for people (English; the page translates it).
fn fee_name(fee_type: &str) -> &'static str {
    match fee_type {
        "payment" => "Payment fee",
        "shipping" => "Shipping fee",
        "service" => "Service fee",
        "cancellation" => "Cancellation fee",
        "insurance" => "Insurance fee",
        "late" => "Late fee",
        "giftcard" => "Gift card",
        _ => "Other fees",
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
pub async fn order_page(req: &Request, state: Data<&AppState>) -> Response {
    order_answer(&state, req).await
}

/// The route's parameters by name. Read here rather than by the `Path` extractor, whose
/// refusal (of a segment that is not UTF-8 once decoded) would be an API error without the
/// page's headers: a missing one is the page's own 404.
fn params<'a, const N: usize>(req: &'a Request, names: [&str; N]) -> Option<[&'a str; N]> {
    let mut values = [""; N];
    for (value, name) in values.iter_mut().zip(names) {
        *value = req.raw_path_param(name)?;
    }
    Some(values)
}

/// An order reached through its secret link, with what its pages show around it.
pub(super) struct Linked {
    /// The organizer's slug.
    pub organizer: String,
    /// The organizer's name, for the pages' header.
    pub organizer_name: String,
    /// The event.
    pub event: event::Model,
    /// The order.
    pub order: Order,
    /// The event's settings.
    pub settings: Arc<EventSettings>,
    /// The reader's language.
    pub lang: &'static str,
    /// The order page's path, without a trailing slash.
    pub base: String,
}

impl Linked {
    /// The order behind the request's link (`:organizer`, `:event`, `:code`, `:secret`);
    /// `Err` is the answer to give instead (the 404 page).
    pub(super) async fn of(req: &Request, state: &AppState) -> Result<Self, Response> {
        let Some([org, ev, code, secret]) = params(req, ["organizer", "event", "code", "secret"])
        else {
            return Err(protect(not_found()));
        };
        let failed = |err: sea_orm::DbErr| protect(crate::http::ApiError::from(err).as_response());
        let (event, order) = match find(state, org, ev, code, secret).await {
            Ok(Some(found)) => found,
            Ok(None) => return Err(protect(not_found())),
            Err(err) => return Err(failed(err)),
        };
        let cache = state.cache.current().await;
        let settings = settings::of_event(&state.db, &state.settings, cache, &event)
            .await
            .map_err(failed)?;
        let organizer_name = crate::domain::storefront::organizer(&state.db, cache, org)
            .await
            .map_err(failed)?
            .map(|o| o.name.clone())
            .unwrap_or_default();
        let lang = reader_language(req, &order.row.locale);
        let base = format!("/{org}/{ev}/order/{}/{secret}", order.row.code);
        Ok(Self {
            organizer: org.to_owned(),
            organizer_name,
            event,
            order,
            settings,
            lang,
            base,
        })
    }

    /// What every page of the order shows around its content: language, colours, the
    /// organizer in the header, the event's name and the order's code.
    pub(super) fn frame(&self) -> minijinja::Value {
        minijinja::context! {
            lang => self.lang,
            organizer => minijinja::context! {
                name => self.organizer_name,
                url => format!("/{}/", self.organizer),
            },
            event => I18nString::from_stored(&self.event.name).localize(self.lang),
            code => self.order.row.code,
            currency => self.event.currency,
            order_url => format!("{}/", self.base),
            ..super::brand_colours(&self.settings)
        }
    }
}

async fn order_answer(state: &AppState, req: &Request) -> Response {
    let linked = match Linked::of(req, state).await {
        Ok(linked) => linked,
        Err(answer) => return answer,
    };
    match order_context(state, req, &linked).await {
        Ok(context) => {
            crate::web::render_with_policy(StatusCode::OK, "order.html", context, ORDER_PAGE_POLICY)
        }
        Err(err) => protect(crate::http::ApiError::from(err).as_response()),
    }
}

/// Everything the order page shows.
async fn order_context(
    state: &AppState,
    req: &Request,
    linked: &Linked,
) -> Result<minijinja::Value, sea_orm::DbErr> {
    let (e, order) = (&linked.event, &linked.order);
    let names = product_names(state, order).await?;
    let tickets = TicketNames::load(&state.db, &order.positions).await?;
    let outputs = offered_outputs(state, e, order, &linked.settings);
    let issued = invoices::of_order(&state.db, order.row.id).await?;
    let now = crate::values::now();
    let offer = self_service::offer(&state.db, e, &linked.settings, order, now).await?;
    let link = format!("{}/download", linked.base);
    let downloads = Downloads {
        link: &link,
        outputs: &outputs,
        settings: &linked.settings,
    };
    let invoice_links: Vec<minijinja::Value> = issued
        .iter()
        .map(|i| {
            minijinja::context! {
                url => format!("{}/invoice/{}", linked.base, i.id),
                number => i.full_invoice_no,
                cancellation => i.is_cancellation,
            }
        })
        .collect();
    let methods: Vec<String> = order
        .payments
        .iter()
        .map(|p| super::payment::provider_name(state, e, &p.provider))
        .collect();
    let asked = |name: &str| {
        req.uri().query().is_some_and(|q| {
            form_urlencoded::parse(q.as_bytes()).any(|(k, v)| k == name && v == "1")
        })
    };
    let context = positions_context(e, order, (&names, &methods), &tickets, &downloads);
    Ok(minijinja::context! {
        invoices => invoice_links,
        cancel_url => offer.cancel.is_some().then(|| format!("{}/cancel", linked.base)),
        // The form is the shop's, open while the event is live.
        modify_url => (offer.modify && e.live).then(|| format!("{}/modify", linked.base)),
        modified => asked("modified"),
        canceled => asked("canceled"),
        refund_by_hand => asked("refund_by_hand"),
        ..minijinja::value::merge_maps([linked.frame(), context])
    })
}

/// An invoice of the order through its secret link, as the order page offers it.
#[handler]
pub async fn invoice_download(req: &Request, state: Data<&AppState>) -> Response {
    let names = ["organizer", "event", "code", "secret", "id"];
    let Some([org, ev, code, secret, id]) = params(req, names) else {
        return protect(not_found());
    };
    protect(
        match invoice_answer(&state, [org, ev, code, secret], id).await {
            Ok(answer) => answer,
            Err(err) => crate::http::ApiError::from(err).as_response(),
        },
    )
}

async fn invoice_answer(
    state: &AppState,
    [org, ev, code, secret]: [&str; 4],
    id: &str,
) -> Result<Response, sea_orm::DbErr> {
    let Some((e, order)) = find(state, org, ev, code, secret).await? else {
        return Ok(not_found());
    };
    let Some(inv) = id.parse::<i64>().ok() else {
        return Ok(not_found());
    };
    let Some(inv) = invoices::by_ids(&state.db, &[inv])
        .await?
        .pop()
        .filter(|i| i.row.order_id == order.row.id)
    else {
        return Ok(not_found());
    };
    let cache = state.cache.current().await;
    let values = settings::of_event(&state.db, &state.settings, cache, &e).await?;
    let row = inv.row.clone();
    match invoices::files::render(&*state.plugins, &e, &values, inv).await {
        Ok(file) => Ok(crate::http::TicketDownload(tickets::Download {
            file_name: invoices::file_name(&row, &file.extension),
            file: crate::domain::extensions::tickets::TicketFile {
                content_type: file.content_type,
                extension: file.extension,
                data: file.data,
            },
        })
        .into_response()),
        Err(error) => {
            tracing::error!(%error, invoice = %row.full_invoice_no, "invoice file not made");
            Ok(crate::http::ApiError::internal().as_response())
        }
    }
}

/// The ticket files the order page offers: the identifiers and names of outputs offered
/// to buyers, when the event lets buyers download tickets (`ticket_download`) and the
/// order may have them.
fn offered_outputs(
    state: &AppState,
    e: &event::Model,
    order: &Order,
    values: &EventSettings,
) -> Vec<(String, String)> {
    tickets::offered(&*state.plugins, e, values, &order.row, crate::values::now())
        .into_iter()
        .map(|o| (o.identifier().to_owned(), o.name().to_owned()))
        .collect()
}

/// What the order page links to download.
struct Downloads<'a> {
    /// `.../download`, the start of each link.
    link: &'a str,
    /// The outputs' identifiers and names.
    outputs: &'a [(String, String)],
    settings: &'a EventSettings,
}

/// A ticket file through the order's secret link: the whole order's
/// (`.../download/{output}`) or one position's (`.../download/{output}/{position}`), as the
/// order page offers them.
#[handler]
pub async fn ticket_download(req: &Request, state: Data<&AppState>) -> Response {
    let names = ["organizer", "event", "code", "secret", "output"];
    let Some([org, ev, code, secret, output]) = params(req, names) else {
        return protect(not_found());
    };
    let position = req.raw_path_param("position");
    protect(
        match download_answer(&state, [org, ev, code, secret], output, position).await {
            Ok(answer) => answer,
            Err(err) => crate::http::ApiError::from(err).as_response(),
        },
    )
}

async fn download_answer(
    state: &AppState,
    [org, ev, code, secret]: [&str; 4],
    output: &str,
    position: Option<&str>,
) -> Result<Response, sea_orm::DbErr> {
    let Some((e, order)) = find(state, org, ev, code, secret).await? else {
        return Ok(not_found());
    };
    let cache = state.cache.current().await;
    let values = settings::of_event(&state.db, &state.settings, cache, &e).await?;
    let offered = offered_outputs(state, &e, &order, &values);
    if !offered.iter().any(|(id, _)| id == output) {
        return Ok(not_found());
    }
    let p = match position {
        Some(id) => match order.positions.iter().find(|p| p.id.to_string() == id) {
            Some(p) => Some(p.clone()),
            None => return Ok(not_found()),
        },
        None => None,
    };
    let maker = state.ticket_maker(cache, &values);
    match tickets::download(maker, &e, &order, p.as_ref(), output).await? {
        Ok(d) => Ok(crate::http::TicketDownload(d).into_response()),
        Err(tickets::DownloadRefused::UnknownOutput) => Ok(not_found()),
        Err(tickets::DownloadRefused::NotAvailable(why)) => Ok((
            StatusCode::FORBIDDEN,
            Html(format!(
                "<!doctype html><title>Not available</title><p>{}</p>",
                escape(why.message())
            )),
        )
            .into_response()),
    }
}

/// The order page's policy: [`CONTENT_SECURITY_POLICY`] with the page's own inline styles
/// (its tickets' QR codes are inline SVG; nothing is loaded from anywhere).
pub const ORDER_PAGE_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; \
     form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

/// The QR code of a ticket secret as inline SVG (without the XML declaration), sized for
/// scanning from a phone's screen; `None` if the secret does not fit a QR code.
pub fn qr_svg(secret: &str) -> Option<String> {
    let code = qrcode::QrCode::with_error_correction_level(secret, qrcode::EcLevel::M).ok()?;
    let svg = code
        .render::<qrcode::render::svg::Color>()
        .min_dimensions(280, 280)
        .quiet_zone(true)
        .build();
    svg.find("<svg").map(|start| svg[start..].to_owned())
}

/// The order page's values about what was bought: `names` are the positions' products,
/// `methods` the payments' providers, for people.
fn positions_context(
    e: &event::Model,
    order: &Order,
    (names, methods): (&[String], &[String]),
    tickets: &TicketNames,
    downloads: &Downloads<'_>,
) -> minijinja::Value {
    let o = &order.row;
    let status = orders::status(o, crate::values::now());
    // Tickets admit once the order is paid (pretix shows no tickets of pending orders).
    let shown: Vec<minijinja::Value> = order
        .positions
        .iter()
        .filter(|p| status == "p" && tickets.admits(p))
        .map(|p| {
            let seat = order.seats.iter().find(|s| Some(s.id) == p.seat_id);
            let t = orders::ticket::text(e, o, p, tickets, seat);
            let files: Vec<minijinja::Value> =
                if crate::domain::tickets::has_ticket(p, tickets, downloads.settings) {
                    downloads
                        .outputs
                        .iter()
                        .map(|(id, name)| {
                            minijinja::context! {
                                url => format!("{}/{id}/{}", downloads.link, p.id),
                                name => name,
                            }
                        })
                        .collect()
                } else {
                    Vec::new()
                };
            minijinja::context! {
                downloads => files,
                qr_svg => qr_svg(&p.secret).unwrap_or_default(),
                secret => p.secret,
                event => t.event,
                item => t.item,
                variation => t.variation,
                attendee => t.attendee,
                begin => t.begin,
                admission => t.admission,
                location => t.location,
                seat => t.seat,
            }
        })
        .collect();
    let positions: Vec<minijinja::Value> = order
        .positions
        .iter()
        .zip(names)
        .map(|(p, name)| {
            minijinja::context! {
                product => name,
                attendee => orders::display_name(&p.attendee_name_parts).unwrap_or_default(),
                price => Money(p.price_cents).to_string(),
            }
        })
        .collect();
    let payments: Vec<minijinja::Value> = order
        .payments
        .iter()
        .zip(methods)
        .map(|(p, method)| {
            minijinja::context! {
                amount => Money(p.amount_cents).to_string(),
                method => method,
                state => super::payment::state_text(&p.state),
                link => p.details["payment_url"].as_str().filter(|_| p.state == "created"),
            }
        })
        .collect();
    let fees: Vec<minijinja::Value> = order
        .fees
        .iter()
        .filter(|f| !f.canceled)
        .map(|f| minijinja::context! { name => fee_name(&f.fee_type), price => Money(f.value_cents).to_string() })
        .collect();
    let refunds: Vec<minijinja::Value> = order
        .refunds
        .iter()
        .filter(|r| r.row.state != "canceled" && r.row.state != "failed")
        .map(|r| {
            minijinja::context! {
                amount => Money(r.row.amount_cents).to_string(),
                done => r.row.state == "done",
                gift_card => (r.row.provider == "giftcard")
                    .then(|| r.row.details["gift_card_secret"].as_str().unwrap_or_default()),
            }
        })
        .collect();
    let order_files: Vec<minijinja::Value> = downloads
        .outputs
        .iter()
        .map(|(id, name)| minijinja::context! { url => format!("{}/{id}", downloads.link), name => name })
        .collect();
    minijinja::context! {
        downloads => order_files,
        status => status_text(status, order.positions.is_empty()),
        fees => fees,
        refunds => refunds,
        waiting => status == "n",
        tickets => shown,
        positions => positions,
        payments => payments,
        total => Money(o.total_cents).to_string(),
    }
}
