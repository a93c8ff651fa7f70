use serde_json::json;
use tessera::domain::event_config::clone_categories_and_tax_rules;
use tessera_tests::TestApp;

use crate::config_support::add_event;

#[tokio::test]
async fn cloning_copies_categories_and_tax_rules_and_maps_old_ids_to_new() {
    let app = TestApp::spawn().await;
    let org = app.organizer("acme").await;
    let from = add_event(&app, org, "2025", false).await;
    let to = add_event(&app, org, "2026", false).await;
    let token = app.admin_token("acme").await;
    let old = "/api/v1/organizers/acme/events/2025";
    let category = app
        .post(
            &format!("{old}/categories/"),
            &token,
            json!({"name": {"en": "Extras"}, "is_addon": true, "position": 4}),
        )
        .await
        .body["id"]
        .as_i64()
        .expect("category");
    let rule = app
        .post(
            &format!("{old}/taxrules/"),
            &token,
            json!({"name": {"en": "VAT"}, "rate": "19.50", "eu_reverse_charge": true, "home_country": "AT"}),
        )
        .await
        .body["id"]
        .as_i64()
        .expect("tax rule");

    let map = clone_categories_and_tax_rules(&app.db, from, to)
        .await
        .expect("clone");

    let new = "/api/v1/organizers/acme/events/2026";
    let new_category = map.categories[&category];
    let new_rule = map.tax_rules[&rule];
    assert_ne!(new_category, category);
    let r = app
        .get(&format!("{new}/categories/{new_category}/"), &token)
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["name"], json!({"en": "Extras"}));
    assert_eq!(r.body["is_addon"], true);
    assert_eq!(r.body["position"], 4);
    let r = app
        .get(&format!("{new}/taxrules/{new_rule}/"), &token)
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["rate"], "19.50");
    assert_eq!(r.body["home_country"], "AT");
    assert_eq!(r.body["eu_reverse_charge"], true);
    assert_eq!(
        app.get(&format!("{old}/categories/"), &token).await.body["count"],
        1
    );
    assert_eq!(
        app.get(&format!("{new}/taxrules/"), &token).await.body["count"],
        1
    );
}
