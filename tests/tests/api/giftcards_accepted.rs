use serde_json::json;
use tessera::admin;
use tessera_tests::TestApp;

/// `shop` accepts the cards issued by `issuer`; returns (app, issuer token, shop token, card id).
async fn setup() -> (TestApp, String, String, i64) {
    let app = TestApp::spawn().await;
    app.organizer("issuer").await;
    app.organizer("shop").await;
    admin::accept_giftcards(&app.db, "shop", "issuer")
        .await
        .expect("accept");
    let issuer = app.token("issuer", &["can_manage_gift_cards"]).await;
    let shop = app.token("shop", &["can_manage_gift_cards"]).await;
    let r = app
        .post(
            "/api/v1/organizers/issuer/giftcards/",
            &issuer,
            json!({"secret": "SHARED", "value": "20.00", "currency": "EUR"}),
        )
        .await;
    assert_eq!(r.status, 201);
    (app, issuer, shop, r.body["id"].as_i64().expect("id"))
}

#[tokio::test]
async fn accepted_cards_are_invisible_without_include_accepted() {
    let (app, _, shop, id) = setup().await;
    assert_eq!(
        app.get("/api/v1/organizers/shop/giftcards/", &shop)
            .await
            .body["count"],
        0
    );
    assert_eq!(
        app.get(&format!("/api/v1/organizers/shop/giftcards/{id}/"), &shop)
            .await
            .status,
        403
    );
    let r = app
        .post(
            &format!("/api/v1/organizers/shop/giftcards/{id}/transact/"),
            &shop,
            json!({"value": "-1.00"}),
        )
        .await;
    assert_eq!(r.status, 403);
}

#[tokio::test]
async fn accepted_cards_are_listed_read_and_transacted_with_include_accepted() {
    let (app, issuer, shop, id) = setup().await;
    let r = app
        .get(
            "/api/v1/organizers/shop/giftcards/?include_accepted=true",
            &shop,
        )
        .await;
    assert_eq!(r.body["count"], 1);
    assert_eq!(r.body["results"][0]["issuer"], "issuer");
    let r = app
        .get(
            &format!("/api/v1/organizers/shop/giftcards/{id}/?include_accepted=true"),
            &shop,
        )
        .await;
    assert_eq!(r.status, 200);
    let r = app
        .post(
            &format!("/api/v1/organizers/shop/giftcards/{id}/transact/?include_accepted=true"),
            &shop,
            json!({"value": "-5.00"}),
        )
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["value"], "15.00");
    let t = app
        .get(
            &format!("/api/v1/organizers/issuer/giftcards/{id}/transactions/"),
            &issuer,
        )
        .await;
    assert_eq!(t.body["results"][0]["acceptor"], "shop");
    let t = app
        .get(
            &format!("/api/v1/organizers/shop/giftcards/{id}/transactions/?include_accepted=true"),
            &shop,
        )
        .await;
    assert_eq!(t.body["count"], 2);
}

#[tokio::test]
async fn accepted_cards_cannot_be_changed_directly() {
    let (app, _, shop, id) = setup().await;
    let r = app
        .patch(
            &format!("/api/v1/organizers/shop/giftcards/{id}/?include_accepted=true"),
            &shop,
            json!({"value": "99.00"}),
        )
        .await;
    assert_eq!(r.status, 403);
    let r = app
        .patch(
            &format!("/api/v1/organizers/shop/giftcards/{id}/"),
            &shop,
            json!({"value": "99.00"}),
        )
        .await;
    assert_eq!(r.status, 403);
}

#[tokio::test]
async fn the_issuer_does_not_see_the_acceptors_cards() {
    let (app, issuer, shop, _) = setup().await;
    let r = app
        .post(
            "/api/v1/organizers/shop/giftcards/",
            &shop,
            json!({"secret": "SHOPCARD", "value": "1.00", "currency": "EUR"}),
        )
        .await;
    assert_eq!(r.status, 201);
    let r = app
        .get(
            "/api/v1/organizers/issuer/giftcards/?include_accepted=true",
            &issuer,
        )
        .await;
    assert_eq!(r.body["count"], 1);
    assert_eq!(r.body["results"][0]["secret"], "SHARED");
}

#[tokio::test]
async fn a_secret_of_an_accepted_issuer_cannot_be_reused() {
    let (app, _, shop, _) = setup().await;
    let r = app
        .post(
            "/api/v1/organizers/shop/giftcards/",
            &shop,
            json!({"secret": "SHARED", "value": "1.00", "currency": "EUR"}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["secret"][0].is_string());
}
