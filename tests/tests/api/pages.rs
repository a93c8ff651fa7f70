//! The customer pages behind an order's secret link: they answer an unknown code and a
//! wrong secret alike, and every answer carries headers that keep the link private.

use serde_json::{Value, json};
use tessera_tests::Reply;

use crate::selling_support::{Shop, shop};

const PUBLIC_URL: &str = "http://tessera.test";

/// The headers every page answer carries, with their values.
const PAGE_HEADERS: [(&str, &str); 5] = [
    ("cache-control", "no-store"),
    ("referrer-policy", "no-referrer"),
    ("x-frame-options", "DENY"),
    ("x-content-type-options", "nosniff"),
    (
        "content-security-policy",
        "default-src 'none'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
    ),
];

fn assert_page_headers(reply: &Reply, what: &str) {
    for (name, value) in PAGE_HEADERS {
        assert_eq!(reply.header(name), Some(value), "{name} of {what}");
    }
}

/// The order page's headers (and the payment page's, without a provider's form):
/// [`PAGE_HEADERS`], but their own inline styles are allowed.
fn assert_order_page_headers(reply: &Reply) {
    for (name, value) in PAGE_HEADERS {
        let value = if name == "content-security-policy" {
            tessera::web::orders::ORDER_PAGE_POLICY
        } else {
            value
        };
        assert_eq!(reply.header(name), Some(value), "{name} of the order page");
    }
}

/// An order with a pending manual payment: its code, secret and page paths.
struct Placed {
    code: String,
    secret: String,
    page: String,
    payment_page: String,
}

async fn placed(s: &Shop) -> Placed {
    let o: Value = s.ordered(1, json!({"payment_provider": "manual"})).await;
    let path = |url: &Value| {
        url.as_str()
            .and_then(|u| u.strip_prefix(PUBLIC_URL))
            .expect("a page under the public URL")
            .to_owned()
    };
    Placed {
        code: o["code"].as_str().expect("code").to_owned(),
        secret: o["secret"].as_str().expect("secret").to_owned(),
        page: path(&o["url"]),
        payment_page: path(&o["payments"][0]["payment_url"]),
    }
}

/// A code of the same shape that no order has.
fn other_code(code: &str) -> String {
    let other = if code.starts_with('Z') { "Y" } else { "Z" };
    format!("{other}{}", &code[1..])
}

/// A secret of the same length and alphabet that is not the order's.
fn other_secret(secret: &str) -> String {
    let other = if secret.starts_with('a') { "b" } else { "a" };
    format!("{other}{}", &secret[1..])
}

#[tokio::test]
async fn a_wrong_secret_and_an_unknown_code_get_the_same_answer_with_the_page_headers() {
    let s = shop(Some(10)).await;
    let order = placed(&s).await;
    let wrong_secret = order
        .page
        .replace(&order.secret, &other_secret(&order.secret));
    let unknown_code = order.page.replace(&order.code, &other_code(&order.code));

    let (wrong, wrong_queries) =
        tessera::db::count_queries(
            s.app
                .call(poem::http::Method::GET, &wrong_secret, None, None),
        )
        .await;
    let (unknown, unknown_queries) =
        tessera::db::count_queries(
            s.app
                .call(poem::http::Method::GET, &unknown_code, None, None),
        )
        .await;

    assert_eq!(wrong.status, 404);
    assert_eq!((unknown.status, &unknown.body), (wrong.status, &wrong.body));
    assert_eq!(
        wrong_queries, unknown_queries,
        "the same work for both: nothing of the order is read before its secret matched"
    );
    assert_page_headers(&wrong, "a wrong secret");
    assert_page_headers(&unknown, "an unknown code");
    let names = |r: &Reply| {
        let mut names: Vec<String> = r.headers.keys().map(|k| k.to_string()).collect();
        names.sort();
        names
    };
    assert_eq!(names(&wrong), names(&unknown));
}

#[tokio::test]
async fn a_payment_page_with_a_wrong_secret_answers_like_one_with_an_unknown_code() {
    let s = shop(Some(10)).await;
    let order = placed(&s).await;
    let wrong_secret = order
        .payment_page
        .replace(&order.secret, &other_secret(&order.secret));
    let unknown_code = order
        .payment_page
        .replace(&order.code, &other_code(&order.code));

    let wrong = s
        .app
        .call(poem::http::Method::GET, &wrong_secret, None, None)
        .await;
    let unknown = s
        .app
        .call(poem::http::Method::GET, &unknown_code, None, None)
        .await;

    assert_eq!(wrong.status, 404);
    assert_eq!((unknown.status, &unknown.body), (wrong.status, &wrong.body));
    assert_page_headers(&wrong, "a wrong secret");
    assert_page_headers(&unknown, "an unknown code");
}

#[tokio::test]
async fn the_pages_of_a_right_secret_carry_the_headers_that_keep_the_link_private() {
    let s = shop(Some(10)).await;
    let order = placed(&s).await;

    let page = s
        .app
        .call(poem::http::Method::GET, &order.page, None, None)
        .await;
    let payment = s
        .app
        .call(poem::http::Method::GET, &order.payment_page, None, None)
        .await;

    assert_eq!(page.status, 200, "{}", page.body);
    assert!(
        page.body.as_str().expect("html").contains(&order.code),
        "{}",
        page.body
    );
    assert_order_page_headers(&page);
    assert_eq!(payment.status, 200, "{}", payment.body);
    assert_order_page_headers(&payment);
}

#[tokio::test]
async fn malformed_page_links_get_the_pages_own_404_with_its_headers() {
    let s = shop(Some(10)).await;
    let order = placed(&s).await;
    let base = order.page.trim_end_matches('/');
    let invalid_utf8 = base.replace(&order.secret, "%FF%FE");

    for path in [
        format!("{base}/pay/not-a-number/"),
        format!("{base}/pay/99/"),
        invalid_utf8,
    ] {
        let reply = s.app.call(poem::http::Method::GET, &path, None, None).await;

        assert_eq!(reply.status, 404, "{path}: {}", reply.body);
        assert!(
            reply
                .body
                .as_str()
                .is_some_and(|b| b.contains("Not found.")),
            "{path}: {}",
            reply.body
        );
        assert_page_headers(&reply, &path);
    }
}
