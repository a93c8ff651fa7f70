use poem::http::Method;
use tessera::admin;
use tessera::domain::permissions::PermissionSet;
use tessera::domain::{oauth, users};
use tessera_tests::TestApp;

use crate::browser_support::{Browser, html};
use crate::oauth::{basic, bearer, form};

#[tokio::test]
async fn the_demo_seed_gives_a_working_token_and_data_and_can_run_twice() {
    let app = TestApp::spawn().await;
    let token = admin::seed_demo(&app.state).await.expect("seed").token;
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

    let again = admin::seed_demo(&app.state)
        .await
        .expect("seed again")
        .token;
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
    let token = admin::seed_demo(&app.state).await.expect("seed").token;
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
    let token = admin::seed_demo(&app.state).await.expect("seed").token;
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

#[tokio::test]
async fn the_demo_user_signs_in_and_their_application_works_with_the_printed_secret() {
    let app = TestApp::spawn().await;
    let first = admin::seed_demo(&app.state).await.expect("seed");
    let seed = admin::seed_demo(&app.state).await.expect("seed again");
    assert_eq!(seed.client_id, first.client_id, "one application, kept");
    assert_ne!(seed.client_secret, first.client_secret);
    assert_ne!(seed.password, first.password);

    let mut browser = Browser::new(&app);
    let old = browser
        .sign_in(admin::DEMO_USER, &first.password, "/account")
        .await;
    assert_eq!(
        old.status, 200,
        "the previous run's password no longer works"
    );
    let signed_in = browser
        .sign_in(admin::DEMO_USER, &seed.password, "/account")
        .await;
    assert_eq!(signed_in.status, 303);
    let page = browser.get("/account").await;
    let page = html(&page);
    assert!(page.contains(admin::DEMO_APP));
    assert_eq!(page.matches(&seed.client_id).count(), 1, "{page}");

    let user = users::find_by_email(&app.db, admin::DEMO_USER)
        .await
        .expect("query")
        .expect("demo user");
    let apps = oauth::applications_of(&app.db, user.id)
        .await
        .expect("query");
    assert_eq!(apps.len(), 1);
    assert_eq!(oauth::redirect_uris(&apps[0]), [admin::DEMO_REDIRECT_URI]);
    let grants = users::organizers_of(&app.db, user.id)
        .await
        .expect("grants");
    let demo_grant = grants
        .iter()
        .find(|g| g.organizer.slug == admin::DEMO_ORGANIZER)
        .expect("a member of the demo team");
    assert_eq!(demo_grant.permissions, PermissionSet::all());

    let revoke = |secret: String| {
        let auth = basic(&seed.client_id, &secret);
        let app = &app;
        async move {
            form(app, "/api/v1/oauth/revoke_token", Some(&auth), "token=x")
                .await
                .status
        }
    };
    assert_eq!(revoke(first.client_secret.clone()).await, 401);
    assert_eq!(revoke(seed.client_secret.clone()).await, 200);

    // The README's flow, the consent page aside: a code for the redirect URI, exchanged
    // with the client's Basic credentials, then Bearer calls.
    let organizer = demo_grant.organizer.id;
    let code = oauth::authorize(
        &app.db,
        &apps[0],
        user.id,
        "read",
        &[organizer],
        admin::DEMO_REDIRECT_URI,
        None,
    )
    .await
    .expect("code");
    let body = format!(
        "grant_type=authorization_code&code={code}&redirect_uri=http%3A%2F%2Flocalhost%3A9999%2Fcallback"
    );
    let auth = basic(&seed.client_id, &seed.client_secret);
    let tokens = form(&app, "/api/v1/oauth/token", Some(&auth), &body).await;
    assert_eq!(tokens.status, 200, "{}", tokens.body);
    let access = tokens.body["access_token"].as_str().expect("access");
    let me = bearer(&app, Method::GET, "/api/v1/me", access, None).await;
    assert_eq!(me.body["email"], admin::DEMO_USER);
    let orgs = bearer(&app, Method::GET, "/api/v1/organizers/", access, None).await;
    assert_eq!(orgs.body["results"][0]["slug"], admin::DEMO_ORGANIZER);

    let url = admin::demo_authorize_url("http://127.0.0.1:8000", &seed.client_id);
    assert_eq!(
        url,
        format!(
            "http://127.0.0.1:8000/api/v1/oauth/authorize?response_type=code&client_id={}&scope=read&redirect_uri=http%3A%2F%2Flocalhost%3A9999%2Fcallback&state=demo",
            seed.client_id
        )
    );
}

#[tokio::test]
async fn the_demo_event_runs_a_call_for_papers_the_printed_talk_token_can_read() {
    let app = TestApp::spawn().await;
    let seed = admin::seed_demo(&app.state).await.expect("seed");
    let again = admin::seed_demo(&app.state).await.expect("seed again");
    let base = format!("/api/events/{}", admin::DEMO_EVENT);
    let r = app
        .get(
            &format!("{base}/submissions/?page_size=50"),
            &seed.talk_token,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 12, "seeded once: {}", r.body);
    let r = app
        .get(
            &format!("{base}/submissions/?state=confirmed&expand=speakers,answers.question"),
            &again.talk_token,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let first = &r.body["results"][0];
    assert!(first["speakers"][0]["name"].is_string(), "{first}");
    assert!(
        first["answers"][0]["question"]["question"].is_object(),
        "{first}"
    );
    for path in [
        "submission-types",
        "tracks",
        "tags",
        "questions",
        "speakers",
    ] {
        let r = app.get(&format!("{base}/{path}/"), &seed.talk_token).await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        assert!(
            r.body["count"].as_u64().is_some_and(|n| n > 0),
            "{path}: {}",
            r.body
        );
    }
}
