use poem::http::Method;
use serde_json::{Value, json};
use tessera_tests::TestApp;

use crate::config_support::{add_event, add_item};

const RULES: &str = "/api/v1/organizers/acme/events/conf/taxrules/";

async fn app_with_event() -> (TestApp, i64) {
    let app = TestApp::spawn().await;
    let org = app.organizer("acme").await;
    let event = add_event(&app, org, "conf", false).await;
    (app, event)
}

async fn create(app: &TestApp, token: &str, body: Value) -> i64 {
    let r = app.post(RULES, token, body).await;
    assert_eq!(r.status, 201, "{}", r.body);
    r.body["id"].as_i64().expect("id")
}

#[tokio::test]
async fn a_tax_rule_is_created_shown_changed_replaced_and_deleted() {
    let (app, _) = app_with_event().await;
    let token = app.token("acme", &["can_change_event_settings"]).await;

    let r = app
        .post(
            RULES,
            &token,
            json!({"name": {"en": "VAT"}, "rate": "19.00"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["name"], json!({"en": "VAT"}));
    assert_eq!(r.body["rate"], "19.00");
    assert_eq!(r.body["price_includes_tax"], true);
    assert_eq!(r.body["eu_reverse_charge"], false);
    assert_eq!(r.body["home_country"], json!(null));
    let id = r.body["id"].as_i64().expect("id");
    let one = format!("{RULES}{id}/");

    let r = app
        .patch(
            &one,
            &token,
            json!({"rate": "7", "eu_reverse_charge": true, "home_country": "DE"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["rate"], "7.00");
    assert_eq!(r.body["eu_reverse_charge"], true);
    assert_eq!(r.body["home_country"], "DE");
    assert_eq!(r.body["name"]["en"], "VAT");

    let r = app
        .put(
            &one,
            &token,
            json!({"name": {"en": "Reduced"}, "rate": 5.5, "price_includes_tax": false}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["rate"], "5.50");
    assert_eq!(r.body["price_includes_tax"], false);
    assert_eq!(r.body["eu_reverse_charge"], false);
    assert_eq!(r.body["home_country"], json!(null));

    let r = app.get(RULES, &token).await;
    assert_eq!(r.body["count"], 1);
    assert_eq!(r.body["results"][0]["rate"], "5.50");

    assert_eq!(app.delete(&one, &token).await.status, 204);
    assert_eq!(app.get(&one, &token).await.status, 403);
}

#[tokio::test]
async fn a_rate_outside_0_to_100_or_with_more_than_two_decimals_is_400() {
    let (app, _) = app_with_event().await;
    let token = app.token("acme", &["can_change_event_settings"]).await;
    for rate in [
        json!("100.01"),
        json!("-1"),
        json!("19.123"),
        json!("abc"),
        json!(101),
    ] {
        let r = app
            .post(RULES, &token, json!({"name": {"en": "VAT"}, "rate": rate}))
            .await;
        assert_eq!(r.status, 400, "{rate}: {}", r.body);
        assert!(r.body["rate"][0].is_string(), "{rate}: {}", r.body);
    }
    for rate in ["0", "100", "100.00", "0.01"] {
        let r = app
            .post(RULES, &token, json!({"name": {"en": "VAT"}, "rate": rate}))
            .await;
        assert_eq!(r.status, 201, "{rate}: {}", r.body);
    }
    assert_eq!(app.get(RULES, &token).await.body["count"], 4);

    let id = app.get(RULES, &token).await.body["results"][0]["id"]
        .as_i64()
        .expect("id");
    let r = app
        .patch(&format!("{RULES}{id}/"), &token, json!({"rate": "150"}))
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["rate"][0].is_string());
    let r = app
        .post(RULES, &token, json!({"name": {"en": "VAT"}}))
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["rate"][0].is_string());
}

#[tokio::test]
async fn reverse_charge_needs_a_home_country() {
    let (app, _) = app_with_event().await;
    let token = app.token("acme", &["can_change_event_settings"]).await;
    let r = app
        .post(
            RULES,
            &token,
            json!({"name": {"en": "VAT"}, "rate": "19", "eu_reverse_charge": true}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["home_country"][0].is_string());
    let r = app
        .post(
            RULES,
            &token,
            json!({"name": {"en": "VAT"}, "rate": "19", "home_country": "Germany"}),
        )
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["home_country"][0].is_string());
}

#[tokio::test]
async fn a_tax_rule_used_by_an_item_cannot_be_deleted() {
    let (app, event) = app_with_event().await;
    let token = app.token("acme", &["can_change_event_settings"]).await;
    let used = create(&app, &token, json!({"name": {"en": "VAT"}, "rate": "19"})).await;
    let unused = create(&app, &token, json!({"name": {"en": "Zero"}, "rate": "0"})).await;
    add_item(&app, event, None, Some(used)).await;

    let r = app.delete(&format!("{RULES}{used}/"), &token).await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.body["detail"],
        "This tax rule can not be deleted as it is currently in use."
    );
    assert_eq!(
        app.get(&format!("{RULES}{used}/"), &token).await.status,
        200
    );
    assert_eq!(
        app.delete(&format!("{RULES}{unused}/"), &token)
            .await
            .status,
        204
    );
}

#[tokio::test]
async fn reading_needs_any_access_and_writing_needs_can_change_event_settings() {
    let (app, _) = app_with_event().await;
    let writer = app.token("acme", &["can_change_event_settings"]).await;
    let items = app.token("acme", &["can_change_items"]).await;
    let reader = app.token("acme", &[]).await;
    let id = create(&app, &writer, json!({"name": {"en": "VAT"}, "rate": "19"})).await;
    let one = format!("{RULES}{id}/");
    let body = json!({"name": {"en": "VAT"}, "rate": "7"});

    assert_eq!(app.get(RULES, &reader).await.status, 200);
    assert_eq!(app.get(&one, &reader).await.status, 200);
    assert_eq!(app.post(RULES, &items, body.clone()).await.status, 403);
    assert_eq!(app.post(RULES, &reader, body.clone()).await.status, 403);
    assert_eq!(app.patch(&one, &items, body.clone()).await.status, 403);
    assert_eq!(app.put(&one, &items, body).await.status, 403);
    assert_eq!(app.delete(&one, &items).await.status, 403);
    assert_eq!(app.get(&one, &reader).await.body["rate"], "19.00");
}

#[tokio::test]
async fn another_organizers_token_is_403_and_no_token_is_401() {
    let (app, _) = app_with_event().await;
    app.organizer("other").await;
    let theirs = app.admin_token("other").await;
    let mine = app.admin_token("acme").await;
    let id = create(&app, &mine, json!({"name": {"en": "VAT"}, "rate": "19"})).await;

    assert_eq!(app.get(RULES, &theirs).await.status, 403);
    assert_eq!(app.get(&format!("{RULES}{id}/"), &theirs).await.status, 403);
    assert_eq!(
        app.delete(&format!("{RULES}{id}/"), &theirs).await.status,
        403
    );
    assert_eq!(app.call(Method::GET, RULES, None, None).await.status, 401);
    assert_eq!(
        app.call(Method::DELETE, &format!("{RULES}{id}/"), None, None)
            .await
            .status,
        401
    );
}
