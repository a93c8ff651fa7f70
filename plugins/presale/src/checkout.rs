//! The checkout, in pretix's steps: `checkout/start` leads to the first, `questions` (the
//! buyer's e-mail, the attendees' names, e-mails and answers, an invoice address),
//! `payment` (a provider among those offered, with its fee; skipped for an order that costs
//! nothing), `confirm` (everything once more, and the button that places the order). The
//! order placed, the buyer is on its page.

use sea_orm::{ColumnTrait, DbErr, EntityTrait, QueryFilter};
use serde_json::{Value, json};
use tessera::db::entities::{cart_position, order};
use tessera::domain::carts::checkout::{self, Ask, Entered, FieldErrors, Form, Placing};
use tessera::domain::carts::{self as carts, addons, buying};
use tessera::domain::discounts::Priced;
use tessera::domain::questions;
use tessera::domain::sale::Catalogue;
use tessera::plugin::pages::{PageAnswer, PageContext, PageRequest};
use tessera::values::texts;

use crate::present;
use crate::shop::{self, Shop};

/// `checkout/start`.
pub struct Start;
/// `checkout/questions`.
pub struct Questions;
/// `checkout/payment`.
pub struct Payment;
/// `checkout/confirm`.
pub struct Confirm;

/// A shop with a cart to check out, or the answer to give instead: the event page for an
/// empty cart, the order's page once the cart became an order.
pub(crate) struct Checkout<'a> {
    pub(crate) shop: Shop<'a>,
    pub(crate) cart: String,
    positions: Vec<cart_position::Model>,
    /// What each position costs after the event's discounts.
    priced: Vec<Priced>,
    catalogue: Catalogue,
    entered: Entered,
}

impl Checkout<'_> {
    /// What the cart costs after discounts.
    fn total(&self) -> i64 {
        self.priced.iter().map(|p| p.price).sum()
    }
}

pub(crate) async fn open<'a>(
    cx: &PageContext<'a>,
    req: &PageRequest,
) -> Result<Result<Checkout<'a>, PageAnswer>, DbErr> {
    let shop = match shop::find(cx, req).await? {
        Ok(shop) => shop,
        Err((why, lang)) => return Ok(Err(shop::closed(why, &lang))),
    };
    let Some(cart) = shop::cart_id(req) else {
        return Ok(Err(PageAnswer::redirect(shop.path())));
    };
    let entered = checkout::entered(cx.db, shop.event.id, cart).await?;
    let held = buying::positions(cx.db, shop.event.id, cart).await?;
    let ordered = addons::in_order(&held);
    if ordered.is_empty() {
        // The cart may be becoming an order in another request: its code once it has.
        let placed = checkout::placed_order(cx.db, shop.event.id, cart).await?;
        return Ok(Err(match placed {
            Some(code) => order_page(cx, &shop, &code).await?,
            None => PageAnswer::redirect(shop.path()),
        }));
    }
    let catalogue = carts::catalogue_of(cx.db, shop.cache, &shop.event, &ordered).await?;
    let priced = carts::discounted(cx.db, &catalogue, &ordered, tessera::values::now()).await?;
    Ok(Ok(Checkout {
        cart: cart.to_owned(),
        shop,
        positions: ordered.into_iter().cloned().collect(),
        priced,
        catalogue,
        entered,
    }))
}

/// The page of the order of that code (placed from this browser's cart).
async fn order_page(
    cx: &PageContext<'_>,
    shop: &Shop<'_>,
    code: &str,
) -> Result<PageAnswer, DbErr> {
    let found = order::Entity::find()
        .filter(order::Column::EventId.eq(shop.event.id))
        .filter(order::Column::Code.eq(code))
        .one(cx.db)
        .await?;
    Ok(match found {
        // A frame's cart is no secret of the buyer's (its ID is in the address, and the
        // embedding site's): only the request that placed the order leads to its link.
        Some(o) if shop.frame.is_some() => crate::frame::placed_without_link(shop, &o.code),
        Some(o) => placed(shop, &o.code, &o.secret),
        None => PageAnswer::redirect(shop.path()),
    })
}

/// The way to a placed order's page. The browser gets a new cart: the old one is the
/// order's for good (a second submit of its form still finds the order).
fn placed(shop: &Shop<'_>, code: &str, secret: &str) -> PageAnswer {
    PageAnswer::redirect(format!("{}/order/{code}/{secret}", shop.path())).with_cookie(
        shop::CART_COOKIE,
        &tessera::domain::tokens::generate(),
        shop::CART_COOKIE_SECONDS,
    )
}

macro_rules! open_or_answer {
    ($cx:expr, $req:expr) => {
        match $crate::checkout::open($cx, $req).await? {
            Ok(c) => c,
            Err(answer) => return Ok(answer),
        }
    };
}

#[async_trait::async_trait]
impl tessera::plugin::pages::Page for Start {
    async fn answer(&self, cx: &PageContext<'_>, req: &PageRequest) -> Result<PageAnswer, DbErr> {
        let c = open_or_answer!(cx, req);
        let bases = crate::addons::offered(cx, &c).await?;
        let step = if bases.is_empty() {
            "questions"
        } else {
            "addons"
        };
        Ok(PageAnswer::redirect(format!(
            "{}/checkout/{step}",
            c.shop.path()
        )))
    }
}

#[async_trait::async_trait]
impl tessera::plugin::pages::Page for Questions {
    async fn answer(&self, cx: &PageContext<'_>, req: &PageRequest) -> Result<PageAnswer, DbErr> {
        let mut c = open_or_answer!(cx, req);
        if addons::missing(&crate::addons::offered(cx, &c).await?) {
            let path = c.shop.path();
            return Ok(PageAnswer::redirect(format!("{path}/checkout/addons")));
        }
        let form = checkout::form(cx.db, &c.shop.event, &c.shop.settings, &c.positions).await?;
        if req.form.is_empty() {
            let repeat = c.entered.email.clone();
            return Ok(questions_page(&c, &form, &repeat, &FieldErrors::new()));
        }
        read_entries(req, &form, &mut c.entered);
        let repeat = req.field("email_repeat").unwrap_or_default().to_owned();
        let errors = form.check(&mut c.entered, &repeat);
        if !errors.is_empty() {
            return Ok(questions_page(&c, &form, &repeat, &errors));
        }
        checkout::keep(cx.db, c.shop.event.id, &c.cart, &c.entered).await?;
        Ok(PageAnswer::redirect(format!(
            "{}/checkout/payment",
            c.shop.path()
        )))
    }
}

#[async_trait::async_trait]
impl tessera::plugin::pages::Page for Payment {
    async fn answer(&self, cx: &PageContext<'_>, req: &PageRequest) -> Result<PageAnswer, DbErr> {
        let mut c = open_or_answer!(cx, req);
        if c.entered.email.is_empty() {
            return Ok(PageAnswer::redirect(format!(
                "{}/checkout/questions",
                c.shop.path()
            )));
        }
        let total = c.total();
        let offered = checkout::providers(
            cx.db,
            &**cx.plugins,
            cx.settings,
            &c.shop.event,
            &c.shop.settings,
            total,
        )
        .await?;
        let confirm = format!("{}/checkout/confirm", c.shop.path());
        if total == 0 {
            return Ok(PageAnswer::redirect(confirm));
        }
        let mut error = None;
        if !req.form.is_empty() {
            match req
                .field("payment")
                .filter(|p| offered.iter().any(|o| o.id == *p))
            {
                Some(p) => {
                    c.entered.payment = Some(p.to_owned());
                    checkout::keep(cx.db, c.shop.event.id, &c.cart, &c.entered).await?;
                    return Ok(PageAnswer::redirect(confirm));
                }
                None => {
                    error = Some(
                        texts::translate(&c.shop.lang, "Please select a payment method.")
                            .to_owned(),
                    )
                }
            }
        }
        let currency = &c.shop.event.currency;
        let providers: Vec<Value> = offered
            .iter()
            .map(|o| {
                json!({
                    "id": o.id,
                    "name": o.name,
                    "fee": (o.fee_cents > 0).then(|| present::money(o.fee_cents, currency)),
                    "checked": c.entered.payment.as_deref() == Some(o.id.as_str()) || offered.len() == 1,
                })
            })
            .collect();
        let mut context = c.shop.layout();
        context.extend([
            ("title".into(), "Payment".into()),
            ("providers".into(), providers.into()),
            ("error".into(), error.clone().into()),
            (
                "back".into(),
                format!("{}/checkout/questions", c.shop.path()).into(),
            ),
        ]);
        let status = if error.is_some() { 400 } else { 200 };
        Ok(PageAnswer::html_status(
            status,
            "presale/checkout_payment.html",
            context.into(),
        ))
    }
}

#[async_trait::async_trait]
impl tessera::plugin::pages::Page for Confirm {
    async fn answer(&self, cx: &PageContext<'_>, req: &PageRequest) -> Result<PageAnswer, DbErr> {
        let c = open_or_answer!(cx, req);
        let path = c.shop.path();
        if c.entered.email.is_empty() {
            return Ok(PageAnswer::redirect(format!("{path}/checkout/questions")));
        }
        let total = c.total();
        if total > 0 && c.entered.payment.is_none() {
            return Ok(PageAnswer::redirect(format!("{path}/checkout/payment")));
        }
        let mut error = None;
        // The order is placed at the prices the page showed, or not at all (a discount may
        // have ended meanwhile).
        let shown = req.field("total");
        if !req.form.is_empty() && shown.is_some_and(|t| t != total.to_string()) {
            error = Some(texts::translate(&c.shop.lang, PRICE_CHANGED).to_owned());
        } else if !req.form.is_empty() {
            let placing = Placing {
                public_url: cx.public_url,
                organizer: &c.shop.organizer.slug,
                event: &c.shop.event,
                settings: c.shop.settings.clone(),
                plugins: cx.plugins.clone(),
                placements: cx.placements,
                cache: c.shop.cache,
                locale: &c.shop.lang,
            };
            match checkout::place(cx.db, placing, &c.cart, &c.positions, &c.priced, &c.entered)
                .await?
            {
                Ok(order) => {
                    cx.mailer.wake();
                    return Ok(placed(&c.shop, &order.row.code, &order.row.secret));
                }
                Err(refused) => {
                    let placed = checkout::placed_order(cx.db, c.shop.event.id, &c.cart).await?;
                    if let Some(code) = placed {
                        return order_page(cx, &c.shop, &code).await;
                    }
                    error = Some(shop::said(&c.shop.lang, &refused));
                }
            }
        }
        confirm_page(cx, &c, total, error).await
    }
}

/// Why a confirmation placed nothing: the cart's prices are not those confirmed.
const PRICE_CHANGED: &str = "The price of some of the items in your cart has changed in the meantime. Please see below for details.";

/// The form's entries into what was entered before.
pub(crate) fn read_entries(req: &PageRequest, form: &Form, entered: &mut Entered) {
    entered.email = req.field("email").unwrap_or_default().to_owned();
    for (position, asked) in &form.questions {
        let a = entered.attendees.entry(*position).or_default();
        a.name = req
            .field(&format!("{position}-name"))
            .unwrap_or_default()
            .to_owned();
        a.email = req
            .field(&format!("{position}-email"))
            .unwrap_or_default()
            .to_owned();
        for q in asked {
            let name = format!("{position}-question_{}", q.row.id);
            let values: Vec<&str> = req
                .form
                .iter()
                .filter(|(k, _)| *k == name)
                .map(|(_, v)| v.as_str())
                .take(q.options.len().max(1))
                .collect();
            let answer = if questions::has_options(&q.row.r#type) {
                let options = values.iter().filter_map(|v| v.parse().ok()).collect();
                (String::new(), options)
            } else if q.row.r#type == questions::BOOLEAN {
                let yes = values.first().is_some_and(|v| *v == "True");
                ((if yes { "True" } else { "" }).to_owned(), Vec::new())
            } else {
                (
                    values.first().copied().unwrap_or_default().to_owned(),
                    Vec::new(),
                )
            };
            a.answers.insert(q.row.id, answer);
        }
    }
    if form.invoice != Ask::No {
        let field = |k: &str| {
            req.field(&format!("invoice-{k}"))
                .unwrap_or_default()
                .trim()
                .to_owned()
        };
        let company = field("company");
        entered.invoice_address = Some(json!({
            "is_business": !company.is_empty(),
            "company": company,
            "name_parts": {"_scheme": "full", "full_name": field("name")},
            "street": field("street"),
            "zipcode": field("zipcode"),
            "city": field("city"),
            "country": field("country").to_uppercase(),
            "state": "",
            "internal_reference": "",
            "vat_id": if form.vat_id { field("vat_id") } else { String::new() },
        }));
    }
}

/// The questions step's page.
fn questions_page(
    c: &Checkout<'_>,
    form: &Form,
    email_repeat: &str,
    errors: &FieldErrors,
) -> PageAnswer {
    let catalogue = &c.catalogue;
    let products = c
        .positions
        .iter()
        .map(|p| {
            let name = catalogue.product_name(p.item_id, p.variation_id, &c.shop.lang);
            (p.id, name)
        })
        .collect();
    let asking = Asking {
        shop: &c.shop,
        products,
        entered: &c.entered,
        purpose: Purpose::Checkout,
        back: c.shop.path(),
    };
    fields_page(&asking, form, email_repeat, errors)
}

/// What a form of the buyer's information is for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// The checkout's questions step.
    Checkout,
    /// Changing an order's information.
    Modify,
}

/// The buyer's information as a form asks it: the shop, the positions' products by
/// position ID, and what is entered.
pub(crate) struct Asking<'a> {
    /// The event's shop.
    pub(crate) shop: &'a Shop<'a>,
    /// The positions' products, by position ID.
    pub(crate) products: Vec<(i64, String)>,
    /// What is entered so far.
    pub(crate) entered: &'a Entered,
    /// Checkout or change.
    pub(crate) purpose: Purpose,
    /// Where the form's "back" link leads.
    pub(crate) back: String,
}

/// The page of a form of the buyer's information: at checkout, or to change an order's.
pub(crate) fn fields_page(
    c: &Asking<'_>,
    form: &Form,
    email_repeat: &str,
    errors: &FieldErrors,
) -> PageAnswer {
    let lang = &c.shop.lang;
    let positions: Vec<Value> = form
        .questions
        .iter()
        .filter_map(|(id, asked)| {
            let product = &c.products.iter().find(|(p, _)| p == id)?.1;
            let a = c.entered.attendees.get(id).cloned().unwrap_or_default();
            let asked: Vec<Value> = asked
                .iter()
                .map(|q| {
                    let (text, chosen) = a.answers.get(&q.row.id).cloned().unwrap_or_default();
                    let field = format!("{id}-question_{}", q.row.id);
                    json!({
                        "field": field,
                        "label": present::text(&q.row.question, lang),
                        "help": q.row.help_text.as_ref().map(|h| present::text(h, lang)),
                        "type": q.row.r#type,
                        "required": q.row.required,
                        "value": text,
                        "error": errors.get(&field).map(|e| texts::translate(lang, e)),
                        "options": q.options.iter().map(|o| json!({
                            "id": o.id,
                            "label": present::text(&o.answer, lang),
                            "checked": chosen.contains(&o.id),
                        })).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let error = |k: &str| {
                errors
                    .get(&format!("{id}-{k}"))
                    .map(|e| texts::translate(lang, e))
            };
            Some(json!({
                "id": id,
                "personal": form.asks_attendee(*id),
                "product": product,
                "name": a.name,
                "name_error": error("name"),
                "email": a.email,
                "email_error": error("email"),
                "questions": asked,
            }))
        })
        .collect();
    let address = c
        .entered
        .invoice_address
        .clone()
        .unwrap_or_else(|| json!({}));
    let invoice_error = |k: &str| {
        errors
            .get(&format!("invoice-{k}"))
            .map(|e| texts::translate(lang, e))
    };
    let mut context = c.shop.layout();
    context.extend([
        ("title".into(), "Your information".into()),
        ("email".into(), c.entered.email.clone().into()),
        ("email_repeat".into(), email_repeat.into()),
        (
            "email_error".into(),
            errors
                .get("email")
                .map(|e| texts::translate(lang, e))
                .into(),
        ),
        (
            "email_repeat_error".into(),
            errors
                .get("email_repeat")
                .map(|e| texts::translate(lang, e))
                .into(),
        ),
        ("names".into(), ask(form.names)),
        ("emails".into(), ask(form.emails)),
        ("positions".into(), positions.into()),
        (
            "invoice".into(),
            json!({
                "asked": ask(form.invoice),
                "vat_id": form.vat_id,
                "company": address.get("company"),
                "name": address.get("name_parts").and_then(tessera::domain::orders::display_name),
                "street": address.get("street"),
                "zipcode": address.get("zipcode"),
                "city": address.get("city"),
                "country": address.get("country"),
                "vat_id_value": address.get("vat_id"),
                "errors": {
                    "street": invoice_error("street"),
                    "zipcode": invoice_error("zipcode"),
                    "city": invoice_error("city"),
                    "country": invoice_error("country"),
                },
            }),
        ),
        ("has_errors".into(), (!errors.is_empty()).into()),
        ("modify".into(), (c.purpose == Purpose::Modify).into()),
        ("back".into(), c.back.clone().into()),
    ]);
    if c.purpose == Purpose::Modify {
        context.insert("title".into(), "Change your information".into());
    }
    let status = if errors.is_empty() { 200 } else { 400 };
    PageAnswer::html_status(status, "presale/checkout_questions.html", context.into())
}

fn ask(a: Ask) -> Value {
    match a {
        Ask::No => Value::Null,
        Ask::Optional => "optional".into(),
        Ask::Required => "required".into(),
    }
}

/// The confirmation step's page: the cart, the entries, the payment, the total.
async fn confirm_page(
    cx: &PageContext<'_>,
    c: &Checkout<'_>,
    total: i64,
    error: Option<String>,
) -> Result<PageAnswer, DbErr> {
    let lang = &c.shop.lang;
    let currency = &c.shop.event.currency;
    let catalogue = &c.catalogue;
    let positions: Vec<Value> = c
        .positions
        .iter()
        .zip(&c.priced)
        .map(|(p, priced)| {
            let a = c.entered.attendees.get(&p.id).cloned().unwrap_or_default();
            json!({
                "addon": p.addon_to_id.is_some(),
                "product": catalogue.product_name(p.item_id, p.variation_id, lang),
                "price": present::money(priced.price, currency),
                "original_price": (priced.price != p.price_cents)
                    .then(|| present::money(p.price_cents, currency)),
                "attendee": a.name,
            })
        })
        .collect();
    let provider = c
        .entered
        .payment
        .as_deref()
        .filter(|_| total > 0)
        .and_then(|id| cx.plugins.payment_provider(&c.shop.event, id));
    let fee = provider.as_ref().map_or(0, |p| {
        checkout::fee(&c.shop.settings, p.identifier(), total)
    });
    let mut context = c.shop.layout();
    context.extend([
        ("title".into(), "Review your order".into()),
        ("positions".into(), positions.into()),
        (
            "fee".into(),
            (fee > 0).then(|| present::money(fee, currency)).into(),
        ),
        ("total".into(), present::money(total + fee, currency).into()),
        ("confirmed_total".into(), total.to_string().into()),
        ("email".into(), c.entered.email.clone().into()),
        (
            "payment".into(),
            provider.map(|p| p.name().to_owned()).into(),
        ),
        ("error".into(), error.clone().into()),
        (
            "back".into(),
            format!("{}/checkout/payment", c.shop.path()).into(),
        ),
        (
            "edit".into(),
            format!("{}/checkout/questions", c.shop.path()).into(),
        ),
    ]);
    let status = if error.is_some() { 400 } else { 200 };
    Ok(PageAnswer::html_status(
        status,
        "presale/checkout_confirm.html",
        Value::Object(context),
    ))
}
