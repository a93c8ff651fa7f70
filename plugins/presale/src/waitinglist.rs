//! `waitinglist?item=&var=&subevent=`: a buyer asks to be told by e-mail when a sold-out
//! product the shop shows (of an item that allows waiting, while the sale runs) can be bought
//! again. The rules' [`waiting_list`] decides whether they may wait
//! (the event's waiting list on, the item allowing it, the product not available) and keeps
//! their place; the event page links here from sold-out products.

use sea_orm::DbErr;
use tessera::domain::sale::Catalogue;
use tessera::domain::storefront::{self, Look, Sale};
use tessera::domain::waiting_list::{self, EntryError, EntryFields};
use tessera::plugin::pages::{PageAnswer, PageContext, PageRequest};
use tessera::values::texts;

use crate::shop::{self, Shop};

/// The waiting list's form, and its form posted.
pub struct WaitingList;

#[async_trait::async_trait]
impl tessera::plugin::pages::Page for WaitingList {
    async fn answer(&self, cx: &PageContext<'_>, req: &PageRequest) -> Result<PageAnswer, DbErr> {
        let shop = match shop::find(cx, req).await? {
            Ok(shop) => shop,
            Err((why, lang)) => return Ok(shop::closed(why, &lang)),
        };
        let number = |k: &str| req.query(k).and_then(|v| v.trim().parse::<i64>().ok());
        let (item, variation, date) = (number("item"), number("var"), number("subevent"));
        // Only a product the shop shows, of an item that allows waiting, while it sells.
        let now = tessera::values::now();
        let day = match date {
            Some(id) if shop.event.has_subevents => {
                storefront::date(cx.db, shop.event.id, id).await?
            }
            _ => None,
        };
        let look = Look {
            date,
            voucher: None,
            settings: &shop.settings,
            now,
            add_ons: false,
        };
        let shelf = storefront::shelf(cx.db, shop.cache, &shop.event, &look).await?;
        let shown = shelf.items().find(|i| {
            Some(i.item.id) == item
                && i.item.allow_waitinglist
                && match variation {
                    None => i.offer.is_some(),
                    Some(v) => i.variations.iter().any(|(var, _)| var.id == v),
                }
        });
        let selling = storefront::sale(&shop.event, day.as_ref(), now) == Sale::Open;
        let (Some(shown), true) = (shown, selling) else {
            return Ok(PageAnswer::not_found());
        };
        let item = shown.item.id;
        let dates: Vec<i64> = date.into_iter().collect();
        let catalogue = Catalogue::load_kept(cx.db, shop.cache, &shop.event, &dates).await?;
        let product = catalogue.product_name(item, variation, &shop.lang);
        let mut form = Form {
            product,
            email: String::new(),
            email_error: None,
            error: None,
        };
        if req.form.is_empty() {
            return Ok(page(&shop, &form, false));
        }
        form.email = req.field("email").unwrap_or_default().trim().to_owned();
        if form.email.len() > 254 {
            form.email_error =
                Some(texts::translate(&shop.lang, "Enter a valid email address.").to_owned());
            form.email.clear();
            return Ok(page(&shop, &form, false));
        }
        let fields = EntryFields {
            name_parts: None,
            email: form.email.clone(),
            phone: None,
            item_id: item,
            variation_id: variation,
            locale: shop.lang.clone(),
            subevent_id: date,
            priority: 0,
        };
        let said = |text: &str| texts::translate(&shop.lang, text).to_owned();
        match waiting_list::create(cx.db, cx.settings, &shop.event, fields).await {
            Ok(_) => return Ok(page(&shop, &form, true)),
            Err(EntryError::Invalid(found)) => {
                for (field, message) in found {
                    match field {
                        "email" => form.email_error = Some(said(&message)),
                        _ => form.error = Some(said(&message)),
                    }
                }
            }
            Err(EntryError::NotNow(why)) => form.error = Some(said(why)),
            Err(EntryError::Db(e)) => return Err(e),
            Err(EntryError::HasVoucher | EntryError::Gone) => return Ok(PageAnswer::not_found()),
        }
        Ok(page(&shop, &form, false))
    }
}

/// What the form shows.
struct Form {
    product: String,
    email: String,
    email_error: Option<String>,
    error: Option<String>,
}

fn page(shop: &Shop<'_>, form: &Form, added: bool) -> PageAnswer {
    let mut context = shop.layout();
    context.extend([
        ("title".into(), "Waiting list".into()),
        ("product".into(), form.product.clone().into()),
        ("email".into(), form.email.clone().into()),
        ("email_error".into(), form.email_error.clone().into()),
        ("error".into(), form.error.clone().into()),
        ("added".into(), added.into()),
        ("back".into(), shop.path().into()),
    ]);
    let refused = form.error.is_some() || form.email_error.is_some();
    let status = if refused { 400 } else { 200 };
    PageAnswer::html_status(status, "presale/waitinglist.html", context.into())
}
