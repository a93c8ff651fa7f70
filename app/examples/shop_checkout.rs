//! The shop's checkout under load, for `bench/run`: buyers, each in a browser session of its
//! own, buy one ticket end to end as a browser does it: the event page (its CSRF token and
//! cookie), add to cart, the questions, the payment method and the confirmation that places
//! the order. Prints `purchases=<n>` (orders placed per second over the run), `failed=<n>`
//! and latency percentiles of whole purchases.
//!
//! usage: shop_checkout BASE_URL ORGANIZER EVENT ITEM SECONDS BUYERS

use std::time::{Duration, Instant};

use reqwest::header::{COOKIE, HeaderMap, LOCATION, SET_COOKIE};
use reqwest::redirect::Policy;

/// A browser session: its cookies.
#[derive(Default)]
struct Session {
    cookies: Vec<(String, String)>,
}

impl Session {
    fn keep(&mut self, headers: &HeaderMap) {
        for value in headers.get_all(SET_COOKIE) {
            let Some((name, rest)) = value.to_str().ok().and_then(|v| v.split_once('=')) else {
                continue;
            };
            let value = rest.split(';').next().unwrap_or_default().to_owned();
            self.cookies.retain(|(n, _)| n != name);
            self.cookies.push((name.to_owned(), value));
        }
    }

    fn header(&self) -> String {
        self.cookies
            .iter()
            .map(|(n, v)| format!("{n}={v}"))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// A step of the purchase: where its form posts, its fields, and where it must lead.
type Step<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str);

/// One purchase; `Err` says which step failed.
async fn purchase(client: &reqwest::Client, shop: &str, item: &str) -> Result<(), String> {
    let mut session = Session::default();
    let page = client
        .get(shop)
        .header("Accept", "text/html")
        .send()
        .await
        .map_err(|e| format!("event page: {e}"))?;
    session.keep(page.headers());
    let html = page.text().await.map_err(|e| format!("event page: {e}"))?;
    let token = html
        .split("name=\"csrfmiddlewaretoken\" value=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .ok_or("event page: no CSRF token")?
        .to_owned();
    let quantity = format!("item_{item}");
    let steps: [Step; 4] = [
        ("cart/add", vec![(quantity.as_str(), "1")], ""),
        (
            "checkout/questions",
            vec![
                ("email", "buyer@example.org"),
                ("email_repeat", "buyer@example.org"),
            ],
            "/checkout/payment",
        ),
        (
            "checkout/payment",
            vec![("payment", "banktransfer")],
            "/checkout/confirm",
        ),
        ("checkout/confirm", vec![("confirm", "yes")], "/order/"),
    ];
    for (step, fields, leads_to) in steps {
        let mut form = vec![("csrfmiddlewaretoken", token.as_str())];
        form.extend(fields);
        let answer = client
            .post(format!("{shop}{step}"))
            .header(COOKIE, session.header())
            .form(&form)
            .send()
            .await
            .map_err(|e| format!("{step}: {e}"))?;
        session.keep(answer.headers());
        let to = answer
            .headers()
            .get(LOCATION)
            .and_then(|l| l.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        if answer.status().as_u16() != 303 || !to.contains(leads_to) {
            return Err(format!("{step}: {} to {to:?}", answer.status()));
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, base, organizer, event, item, seconds, buyers] = args.as_slice() else {
        eprintln!("usage: shop_checkout BASE_URL ORGANIZER EVENT ITEM SECONDS BUYERS");
        std::process::exit(2);
    };
    let shop = format!("{}/{organizer}/{event}/", base.trim_end_matches('/'));
    let seconds: u64 = seconds.parse().expect("SECONDS");
    let buyers: usize = buyers.parse().expect("BUYERS");
    let client = reqwest::Client::builder()
        .redirect(Policy::none())
        .pool_max_idle_per_host(buyers)
        .build()
        .expect("client");
    let until = Instant::now() + Duration::from_secs(seconds);
    let runs = (0..buyers).map(|_| {
        let (client, shop, item) = (client.clone(), shop.clone(), item.clone());
        tokio::spawn(async move {
            let (mut took, mut failed) = (Vec::new(), Vec::new());
            while Instant::now() < until {
                let start = Instant::now();
                match purchase(&client, &shop, &item).await {
                    Ok(()) => took.push(start.elapsed()),
                    Err(why) => failed.push(why),
                }
            }
            (took, failed)
        })
    });
    let (mut took, mut failed) = (Vec::new(), Vec::new());
    for run in futures::future::join_all(runs).await {
        let (t, f) = run.expect("buyer");
        took.extend(t);
        failed.extend(f);
    }
    took.sort();
    let at = |q: f64| {
        took.get(((took.len() as f64 - 1.0) * q).round() as usize)
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    println!("purchases={:.1}", took.len() as f64 / seconds as f64);
    println!("orders={}", took.len());
    println!("failed={}", failed.len());
    println!("p50={:.1}ms", at(0.5));
    println!("p99={:.1}ms", at(0.99));
    if let Some(why) = failed.first() {
        eprintln!("first failure: {why}");
    }
}
