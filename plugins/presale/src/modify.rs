//! `order/{code}/{secret}/modify`: the buyer changes attendee names, e-mails, answers and
//! the invoice address of their order, in the checkout's form, while the event's rules
//! allow it ([`self_service`]).

use sea_orm::DbErr;
use serde_json::json;
use tessera::domain::orders::self_service::{self, NotModified};
use tessera::domain::orders::{self, LifecycleError};
use tessera::domain::sale::Catalogue;
use tessera::plugin::pages::{PageAnswer, PageContext, PageRequest};

use crate::checkout::{Asking, Purpose, fields_page, read_entries};
use crate::shop::{self, Shop};

/// The modify page, and its form posted.
pub struct Modify;

#[async_trait::async_trait]
impl tessera::plugin::pages::Page for Modify {
    async fn answer(&self, cx: &PageContext<'_>, req: &PageRequest) -> Result<PageAnswer, DbErr> {
        let shop = match shop::find(cx, req).await? {
            Ok(shop) => shop,
            Err((why, lang)) => return Ok(shop::closed(why, &lang)),
        };
        let link = ["organizer", "event", "code", "secret"].map(|name| req.param(name));
        let Some((_, order)) = orders::by_link(cx.db, link).await? else {
            return Ok(PageAnswer::not_found());
        };
        let back = format!("{}/order/{}/{}/", shop.home(), order.row.code, link[3]);
        let (form, mut entered) =
            self_service::modify_form(cx.db, &shop.event, &shop.settings, &order).await?;
        let now = tessera::values::now();
        let offer = self_service::offer(cx.db, &shop.event, &shop.settings, &order, now).await?;
        if !offer.modify {
            return Ok(refused(&shop));
        }
        let mut errors = Default::default();
        if !req.form.is_empty() {
            read_entries(req, &form, &mut entered);
            let seller = cx.seller(&shop.organizer.slug);
            let changed =
                self_service::modify(seller, &shop.event, &shop.settings, &order, entered.clone())
                    .await;
            match changed {
                Ok(_) => return Ok(PageAnswer::redirect(format!("{back}?modified=1"))),
                Err(NotModified::Invalid(found)) => errors = found,
                Err(NotModified::NotAllowed) => return Ok(refused(&shop)),
                Err(NotModified::Refused(LifecycleError::Db(e))) => return Err(e),
                Err(NotModified::Refused(_)) => return Ok(refused(&shop)),
            }
        }
        let mut dates: Vec<i64> = order
            .positions
            .iter()
            .filter_map(|p| p.subevent_id)
            .collect();
        dates.sort_unstable();
        dates.dedup();
        let catalogue = Catalogue::load_kept(cx.db, shop.cache, &shop.event, &dates).await?;
        let products = order
            .positions
            .iter()
            .map(|p| {
                let name = catalogue.product_name(p.item_id, p.variation_id, &shop.lang);
                (p.id, name)
            })
            .collect();
        let asking = Asking {
            shop: &shop,
            products,
            entered: &entered,
            purpose: Purpose::Modify,
            back,
        };
        Ok(fields_page(&asking, &form, "", &errors))
    }
}

/// The page saying the order's information cannot be changed (any more).
fn refused(shop: &Shop<'_>) -> PageAnswer {
    let mut context = shop.layout();
    context.extend([
        ("title".into(), json!("Change your information")),
        ("message".into(), json!("You cannot modify this order.")),
    ]);
    PageAnswer::html_status(403, "presale/shop.html", context.into())
}
