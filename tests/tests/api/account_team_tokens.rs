//! Team API tokens on the account page: people who may change teams make a token (shown
//! once), see it listed and revoke it; nobody manages a team beyond what they hold.

use serde_json::json;
use tessera_tests::{TestApp, USER_PASSWORD, user_of};

use crate::browser_support::{Browser, csrf_field, html};

const TEAMS: &str = "/api/v1/organizers/acme/teams/";

/// A team of `acme` made through the API with these flags; its ID.
async fn team(app: &TestApp, admin: &str, body: serde_json::Value) -> i64 {
    let r = app.post(TEAMS, admin, body).await;
    assert_eq!(r.status, 201, "{}", r.body);
    r.body["id"].as_i64().expect("id")
}

/// Ada, signed in, member of `teams`; the browser and her account page's CSRF token.
async fn ada_in<'a>(app: &'a TestApp, teams: &[i64]) -> (Browser<'a>, String) {
    let ada = user_of(app, "ada@example.org", &[]).await;
    for t in teams {
        tessera::domain::users::add_to_team(&app.db, ada, *t)
            .await
            .expect("member");
    }
    let mut browser = Browser::new(app);
    let reply = browser
        .sign_in("ada@example.org", USER_PASSWORD, "/account")
        .await;
    assert_eq!(reply.status, 303, "{}", reply.body);
    let page = browser.get("/account").await;
    assert_eq!(page.status, 200);
    let csrf = csrf_field(html(&page));
    (browser, csrf)
}

/// Posts the form making a token for team `team` named `name`, with this CSRF token.
async fn make_token(
    browser: &mut Browser<'_>,
    csrf: &str,
    team: impl ToString,
    name: &str,
) -> tessera_tests::Reply {
    let team = team.to_string();
    browser
        .post(
            "/account/team-tokens",
            &[
                ("csrfmiddlewaretoken", csrf),
                ("team", &team),
                ("name", name),
            ],
        )
        .await
}

/// The token shown on the page answering the form.
fn shown_token(page: &str) -> String {
    let start = page
        .find("class=\"secret team-token\">")
        .expect("the token")
        + 26;
    page[start..][..64].to_owned()
}

#[tokio::test]
async fn a_team_admin_makes_a_token_sees_it_once_uses_it_and_revokes_it() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let admin = app.admin_token("acme").await;
    let owners = team(
        &app,
        &admin,
        json!({"name": "Owners", "all_events": true, "can_change_teams": true,
               "can_change_organizer_settings": true, "can_create_events": true}),
    )
    .await;
    let (mut browser, csrf) = ada_in(&app, &[owners]).await;

    let page = browser.get("/account").await;
    let listed = html(&page);
    assert!(listed.contains("Team API tokens"), "{listed}");
    assert!(listed.contains("<label for=\"team-token-team\">"));
    assert!(listed.contains("<label for=\"team-token-name\">"));
    assert!(listed.contains("Owners"));

    let made = make_token(&mut browser, &csrf, owners, " Box office sync ").await;
    assert_eq!(made.status, 200, "{}", made.body);
    let token = shown_token(html(&made));
    let events = app.get("/api/v1/organizers/acme/events/", &token).await;
    assert_eq!(events.status, 200, "{}", events.body);

    let page = browser.get("/account").await;
    let listed = html(&page);
    assert!(listed.contains("Box office sync"));
    assert!(!listed.contains(&token), "a token is shown only once");
    let api_list = app.get(&format!("{TEAMS}{owners}/tokens/"), &admin).await;
    let row = &api_list.body["results"][0];
    assert_eq!(row["name"], "Box office sync");
    let id = row["id"].as_i64().expect("id");

    let revoked = browser
        .post(
            &format!("/account/team-tokens/{id}/revoke"),
            &[("csrfmiddlewaretoken", &csrf)],
        )
        .await;
    assert_eq!(revoked.status, 303);
    assert_eq!(revoked.headers["location"], "/account#team-tokens");
    let after = app.get("/api/v1/organizers/acme/events/", &token).await;
    assert_eq!(after.status, 401, "a revoked token stops at once");
    let page = browser.get("/account").await;
    assert!(html(&page).contains("revoked"));
}

#[tokio::test]
async fn people_who_may_not_change_teams_see_no_section_and_cannot_make_tokens() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let admin = app.admin_token("acme").await;
    let box_office = team(
        &app,
        &admin,
        json!({"name": "Box office", "all_events": true, "can_view_orders": true}),
    )
    .await;
    let (mut browser, csrf) = ada_in(&app, &[box_office]).await;
    let page = browser.get("/account").await;
    assert!(!html(&page).contains("Team API tokens"));
    let refused = make_token(&mut browser, &csrf, box_office, "mine").await;
    assert_eq!(refused.status, 404, "{}", refused.body);
    let tokens = app
        .get(&format!("{TEAMS}{box_office}/tokens/"), &admin)
        .await;
    assert_eq!(tokens.body["count"], 0);
}

#[tokio::test]
async fn a_team_admin_never_manages_a_team_reaching_further_than_they_do() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    app.event("acme", "conf").await;
    let admin = app.admin_token("acme").await;
    let narrow = team(
        &app,
        &admin,
        json!({"name": "Conf staff", "all_events": false, "limit_events": ["conf"],
               "can_change_teams": true, "can_view_orders": true}),
    )
    .await;
    let everything = team(
        &app,
        &admin,
        json!({"name": "Everything", "all_events": true, "can_view_orders": true}),
    )
    .await;
    let theirs = app
        .post(
            &format!("{TEAMS}{everything}/tokens/"),
            &admin,
            json!({"name": "theirs"}),
        )
        .await;
    assert_eq!(theirs.status, 201, "{}", theirs.body);
    let theirs = theirs.body["id"].as_i64().expect("id");
    let (mut browser, csrf) = ada_in(&app, &[narrow]).await;
    let page = browser.get("/account").await;
    let listed = html(&page);
    assert!(listed.contains("Conf staff"), "{listed}");
    assert!(
        !listed.contains("Everything"),
        "a team for all events is beyond her"
    );

    let refused = make_token(&mut browser, &csrf, everything, "mine").await;
    assert_eq!(refused.status, 404);
    let revoke = browser
        .post(
            &format!("/account/team-tokens/{theirs}/revoke"),
            &[("csrfmiddlewaretoken", &csrf)],
        )
        .await;
    assert_eq!(revoke.status, 404);
    let tokens = app
        .get(&format!("{TEAMS}{everything}/tokens/"), &admin)
        .await;
    assert_eq!(tokens.body["count"], 1);
    assert_eq!(tokens.body["results"][0]["active"], true);
}

#[tokio::test]
async fn a_token_form_without_a_name_or_csrf_token_makes_nothing() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let admin = app.admin_token("acme").await;
    let owners = team(
        &app,
        &admin,
        json!({"name": "Owners", "all_events": true, "can_change_teams": true}),
    )
    .await;
    let (mut browser, csrf) = ada_in(&app, &[owners]).await;
    let unnamed = make_token(&mut browser, &csrf, owners, "  ").await;
    assert_eq!(unnamed.status, 400);
    assert!(html(&unnamed).contains("Give the token a name."));
    let forged = make_token(&mut browser, "forged", owners, "x").await;
    assert_eq!(forged.status, 403);
    let tokens = app.get(&format!("{TEAMS}{owners}/tokens/"), &admin).await;
    assert_eq!(tokens.body["count"], 0);
}
