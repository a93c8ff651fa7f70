use tessera::admin;
use tessera_tests::TestApp;

#[tokio::test]
async fn the_demo_seed_gives_a_working_token_and_data_and_can_run_twice() {
    let app = TestApp::spawn().await;
    let token = admin::seed_demo(&app.db).await.expect("seed");
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

    let again = admin::seed_demo(&app.db).await.expect("seed again");
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
    let token = admin::seed_demo(&app.db).await.expect("seed");
    let base = format!("/api/v1/organizers/demo/events/{}/", admin::DEMO_EVENT);
    assert_eq!(
        app.get(&format!("{base}categories/"), &token).await.body["count"],
        2
    );
    let items = app.get(&format!("{base}items/"), &token).await.body;
    assert_eq!(items["count"], 3);
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
    assert_eq!(quotas["results"][0]["available_number"], 200);
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
