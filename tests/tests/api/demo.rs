use tessera::admin;
use tessera_tests::TestApp;

#[tokio::test]
async fn the_demo_seed_gives_a_working_token_and_data_and_can_run_twice() {
    let app = TestApp::spawn().await;
    let token = admin::seed_demo(&app.state).await.expect("seed");
    let cards = app.get("/api/v1/organizers/demo/giftcards/", &token).await;
    assert_eq!(cards.status, 200);
    assert_eq!(cards.body["count"], 1);
    assert_eq!(cards.body["results"][0]["secret"], admin::DEMO_GIFTCARD);
    let event = app
        .get(
            &format!("/api/v1/organizers/demo/events/{}/", admin::DEMO_EVENT),
            &token,
        )
        .await;
    assert_eq!(event.status, 200);

    let again = admin::seed_demo(&app.state).await.expect("seed again");
    assert_ne!(again, token);
    assert_eq!(
        app.get("/api/v1/organizers/demo/giftcards/", &again)
            .await
            .body["count"],
        1
    );
}

#[tokio::test]
async fn the_demo_event_has_categories_a_tax_rule_a_catalogue_and_a_seating_plan() {
    let app = TestApp::spawn().await;
    let token = admin::seed_demo(&app.state).await.expect("seed");
    let base = format!("/api/v1/organizers/demo/events/{}/", admin::DEMO_EVENT);
    assert_eq!(
        app.get(&format!("{base}categories/"), &token).await.body["count"],
        2
    );
    let items = app.get(&format!("{base}items/"), &token).await.body;
    assert_eq!(items["count"], 4);
    let all: Vec<&serde_json::Value> = items["results"].as_array().expect("items").iter().collect();
    assert!(
        all.iter()
            .any(|i| i["variations"].as_array().is_some_and(|v| v.len() == 2))
    );
    assert!(
        all.iter()
            .any(|i| !i["addons"].as_array().expect("addons").is_empty())
    );
    assert!(
        all.iter()
            .any(|i| !i["bundles"].as_array().expect("bundles").is_empty())
    );
    let quotas = app
        .get(&format!("{base}quotas/?with_availability=true"), &token)
        .await
        .body;
    assert_eq!(quotas["results"][0]["available_number"], 199, "one sold");
    let questions = app.get(&format!("{base}questions/"), &token).await.body;
    assert_eq!(questions["count"], 1);
    assert_eq!(
        questions["results"][0]["options"].as_array().map(Vec::len),
        Some(3)
    );
    assert_eq!(
        app.get(&format!("{base}taxrules/"), &token).await.body["results"][0]["rate"],
        "19.00"
    );
    let event = app.get(&base, &token).await;
    assert!(event.body["seating_plan"].is_i64());
    assert_eq!(
        app.get(&format!("{base}seats/"), &token).await.body["count"],
        3
    );
}

#[tokio::test]
async fn the_demo_event_sells_a_voucher_a_paid_order_and_keeps_a_waiting_list() {
    let app = TestApp::spawn().await;
    let token = admin::seed_demo(&app.state).await.expect("seed");
    let base = format!("/api/v1/organizers/demo/events/{}/", admin::DEMO_EVENT);

    let vouchers = app.get(&format!("{base}vouchers/"), &token).await.body;
    let orders = app.get(&format!("{base}orders/"), &token).await.body;
    let waiting = app
        .get(&format!("{base}waitinglistentries/"), &token)
        .await
        .body;
    let quotas = app
        .get(&format!("{base}quotas/?with_availability=true"), &token)
        .await
        .body;

    assert_eq!(vouchers["count"], 1);
    assert_eq!(vouchers["results"][0]["code"], admin::DEMO_VOUCHER);
    assert_eq!(vouchers["results"][0]["price_mode"], "set");
    assert_eq!(orders["count"], 1);
    let order = &orders["results"][0];
    assert_eq!(order["status"], "p");
    assert_eq!(order["positions"].as_array().map(Vec::len), Some(2));
    assert_eq!(order["payments"][0]["state"], "confirmed");
    assert_eq!(waiting["count"], 1);
    assert_eq!(waiting["results"][0]["email"], "grace@example.org");
    let quota = |name: &str| {
        quotas["results"]
            .as_array()
            .and_then(|q| q.iter().find(|q| q["name"] == name))
            .cloned()
            .expect("quota")
    };
    assert_eq!(quota("Main hall")["available_number"], 199);
    let room = quota("Workshop room");
    assert_eq!(room["availability"]["paid_orders"], 1);
    assert_eq!(room["availability"]["waiting_list"], 1);
    assert_eq!(room["available_number"], 0);
}
