//! The ticket page: the order's confirmation page shows each admission ticket of a paid
//! order as a QR code of its secret, which a scanner reads and redeems.

use serde_json::{Value, json};

use crate::selling_support::{EVENT, shop};

const PUBLIC_URL: &str = "http://tessera.test";

/// A number attribute of the SVG element (`width="280"`).
fn attribute(svg: &str, name: &str) -> usize {
    let start = svg.find(&format!(" {name}=\"")).expect(name) + name.len() + 3;
    let end = start + svg[start..].find('"').expect("closing quote");
    svg[start..end].parse().expect("a number")
}

/// Paints the SVG's dark rectangles (`M{x} {y}h{w}v{h}H{x}V{y}` each) onto a white bitmap
/// and decodes the QR code in it.
fn decode_qr(svg: &str) -> String {
    let (width, height) = (attribute(svg, "width"), attribute(svg, "height"));
    let start = svg.find(" d=\"").expect("a path") + 4;
    let d = &svg[start..start + svg[start..].find('"').expect("end of path")];
    let mut pixels = vec![255u8; width * height];
    for rect in d.split('M').filter(|r| !r.is_empty()) {
        let numbers: Vec<usize> = rect
            .split(|c: char| !c.is_ascii_digit())
            .filter(|n| !n.is_empty())
            .map(|n| n.parse().expect("number"))
            .collect();
        let (x, y, w, h) = (numbers[0], numbers[1], numbers[2], numbers[3]);
        for row in y..y + h {
            for col in x..x + w {
                pixels[row * width + col] = 0;
            }
        }
    }
    let mut image =
        rqrr::PreparedImage::prepare_from_greyscale(width, height, |x, y| pixels[y * width + x]);
    let grids = image.detect_grids();
    assert_eq!(grids.len(), 1, "one QR code");
    grids[0].decode().expect("a readable QR code").1
}

fn svgs(html: &str) -> Vec<&str> {
    html.match_indices("<svg")
        .map(|(start, _)| {
            let end = start + html[start..].find("</svg>").expect("closed svg") + 6;
            &html[start..end]
        })
        .collect()
}

async fn page(s: &crate::selling_support::Shop, order: &Value) -> String {
    let path = order["url"]
        .as_str()
        .and_then(|u| u.strip_prefix(PUBLIC_URL))
        .expect("a page under the public URL");
    let r = s.app.call(poem::http::Method::GET, path, None, None).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.header("content-security-policy")
            .is_some_and(|p| p.starts_with("default-src 'none'")),
        "nothing is loaded from anywhere"
    );
    r.body.as_str().expect("HTML").to_owned()
}

#[tokio::test]
async fn the_ticket_page_shows_a_qr_code_of_the_secret_that_a_scanner_redeems() {
    let s = shop(None).await;
    let order = s
        .ordered(
            1,
            json!({"status": "p", "positions": [{"item": s.ticket, "attendee_name": "Ada <Lovelace>"}]}),
        )
        .await;
    let html = page(&s, &order).await;
    let codes = svgs(&html);
    assert_eq!(codes.len(), 1, "{html}");
    let secret = order["positions"][0]["secret"].as_str().expect("secret");
    let decoded = decode_qr(codes[0]);
    assert_eq!(decoded, secret);
    assert!(
        attribute(codes[0], "width") >= 280,
        "large enough to scan from a screen"
    );
    assert!(html.contains("Ada &lt;Lovelace&gt;"), "attendee, escaped");
    assert!(html.contains("Ticket"), "product");
    assert!(
        html.contains("<meta name=\"viewport\""),
        "laid out for phones"
    );
    assert!(html.contains("@media print"), "prints well");
    assert!(
        !html.contains(" src=") && !html.contains("<link"),
        "no external assets"
    );

    let list = s
        .app
        .post(
            &format!("{EVENT}/checkinlists/"),
            &s.token,
            json!({"name": "Entrance", "all_products": true}),
        )
        .await;
    assert_eq!(list.status, 201, "{}", list.body);
    let redeemed = s
        .app
        .post(
            "/api/v1/organizers/acme/checkinrpc/redeem/",
            &s.token,
            json!({"secret": decoded, "lists": [list.body["id"]]}),
        )
        .await;
    assert_eq!(redeemed.status, 201, "{}", redeemed.body);
    assert_eq!(redeemed.body["status"], "ok");
}

#[tokio::test]
async fn a_pending_order_shows_no_ticket_until_it_is_paid() {
    let s = shop(None).await;
    let order = s.ordered(1, json!({})).await;
    let html = page(&s, &order).await;
    assert!(svgs(&html).is_empty());
    assert!(html.contains("once the order is paid"));
    let code = order["code"].as_str().expect("code");
    let paid = s.act(code, "mark_paid", json!({})).await;
    assert_eq!(paid.status, 200, "{}", paid.body);
    let html = page(&s, &order).await;
    assert_eq!(svgs(&html).len(), 1);
}
