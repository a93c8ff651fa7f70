use serde_json::{Value, json};
use tessera_tests::TestApp;

const CARDS: &str = "/api/v1/organizers/acme/giftcards/";

async fn with_cards(n: usize) -> (TestApp, String) {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let token = app.token("acme", &["can_manage_gift_cards"]).await;
    for i in 0..n {
        let r = app
            .post(
                CARDS,
                &token,
                json!({"secret": format!("CARD{i:03}"), "value": "1.00", "currency": "EUR"}),
            )
            .await;
        assert_eq!(r.status, 201);
    }
    (app, token)
}

#[tokio::test]
async fn a_list_is_paged_by_fifty_with_absolute_links() {
    let (app, token) = with_cards(53).await;
    let first = app.get(CARDS, &token).await;
    assert_eq!(first.body["count"], 53);
    assert_eq!(first.body["results"].as_array().expect("results").len(), 50);
    assert_eq!(first.body["previous"], Value::Null);
    assert_eq!(
        first.body["next"],
        "http://tessera.test/api/v1/organizers/acme/giftcards/?page=2"
    );
    let second = app.get(&format!("{CARDS}?page=2"), &token).await;
    assert_eq!(second.body["results"].as_array().expect("results").len(), 3);
    assert_eq!(second.body["next"], Value::Null);
    assert_eq!(
        second.body["previous"],
        "http://tessera.test/api/v1/organizers/acme/giftcards/"
    );
}

#[tokio::test]
async fn page_size_only_lowers_the_page_size() {
    let (app, token) = with_cards(7).await;
    let r = app
        .get(&format!("{CARDS}?page_size=3&testmode=false"), &token)
        .await;
    assert_eq!(r.body["results"].as_array().expect("results").len(), 3);
    assert_eq!(
        r.body["next"],
        "http://tessera.test/api/v1/organizers/acme/giftcards/?page_size=3&testmode=false&page=2"
    );
    let r = app.get(&format!("{CARDS}?page_size=500"), &token).await;
    assert_eq!(r.body["results"].as_array().expect("results").len(), 7);
}

#[tokio::test]
async fn page_last_is_the_last_page() {
    let (app, token) = with_cards(5).await;
    let r = app
        .get(&format!("{CARDS}?page_size=2&page=last"), &token)
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["results"].as_array().expect("results").len(), 1);
    assert_eq!(r.body["next"], Value::Null);
}

#[tokio::test]
async fn a_page_past_the_end_is_404_invalid_page() {
    let (app, token) = with_cards(2).await;
    for page in ["2", "0", "x"] {
        let r = app.get(&format!("{CARDS}?page={page}"), &token).await;
        assert_eq!(r.status, 404, "{page}");
        assert_eq!(r.body, json!({"detail": "Invalid page."}));
    }
}

#[tokio::test]
async fn an_empty_list_has_one_empty_page() {
    let (app, token) = with_cards(0).await;
    let r = app.get(CARDS, &token).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body,
        json!({"count": 0, "next": null, "previous": null, "results": []})
    );
}
