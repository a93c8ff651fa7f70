//! Team members and invitations: the API (pretix 2026's `members/` and `invites/`) and the
//! page that accepts an invitation.

use serde_json::{Value, json};
use tessera_tests::{TestApp, USER_PASSWORD, outbox, user_of};

use crate::browser_support::{Browser, csrf_field, html};

const TEAMS: &str = "/api/v1/organizers/acme/teams/";

/// `acme` with a team "Box office" that can view orders, and a token that changes teams.
async fn arrange(app: &TestApp) -> (String, i64) {
    app.organizer("acme").await;
    let admin = app.admin_token("acme").await;
    let r = app
        .post(
            TEAMS,
            &admin,
            json!({"name": "Box office", "all_events": true, "can_view_orders": true}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    (admin, r.body["id"].as_i64().expect("id"))
}

/// The invitation link of the latest mail to `to`.
async fn invitation_link(app: &TestApp, to: &str) -> String {
    let mail = outbox(&app.db)
        .await
        .into_iter()
        .rfind(|m| m.to_address == to)
        .expect("an invitation mail");
    mail.body_text
        .split_whitespace()
        .find(|w| w.contains("/invite/"))
        .expect("a link")
        .to_owned()
}

fn emails(list: &Value) -> Vec<&str> {
    list["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|m| m["email"].as_str().expect("email"))
        .collect()
}

#[tokio::test]
async fn an_address_with_an_account_joins_at_once_and_can_be_removed() {
    let app = TestApp::spawn().await;
    let (admin, team) = arrange(&app).await;
    let user = user_of(&app, "ada@example.org", &[]).await;
    let invites = format!("{TEAMS}{team}/invites/");
    let r = app
        .post(&invites, &admin, json!({"email": "Ada@Example.org"}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body, json!({"id": null, "email": "ada@example.org"}));
    assert_eq!(app.get(&invites, &admin).await.body["count"], 0);

    let members = format!("{TEAMS}{team}/members/");
    let list = app.get(&members, &admin).await;
    assert_eq!(emails(&list.body), ["ada@example.org"]);
    assert_eq!(list.body["results"][0]["fullname"], "Ada Lovelace");
    assert_eq!(list.body["results"][0]["require_2fa"], false);
    assert_eq!(
        app.get(&format!("{members}{user}/"), &admin).await.body["id"],
        user
    );

    let r = app
        .post(&invites, &admin, json!({"email": "ada@example.org"}))
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body,
        json!(["This user already has permissions for this team."])
    );

    assert_eq!(
        app.delete(&format!("{members}{user}/"), &admin)
            .await
            .status,
        204
    );
    assert_eq!(app.get(&members, &admin).await.body["count"], 0);
    assert_eq!(
        app.delete(&format!("{members}{user}/"), &admin)
            .await
            .status,
        403,
        "no longer a member"
    );
}

#[tokio::test]
async fn an_invitation_is_mailed_listed_refused_twice_and_withdrawn() {
    let app = TestApp::spawn().await;
    let (admin, team) = arrange(&app).await;
    let invites = format!("{TEAMS}{team}/invites/");
    let r = app
        .post(&invites, &admin, json!({"email": "grace@example.org"}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.body["id"].as_i64().expect("an invitation");
    let link = invitation_link(&app, "grace@example.org").await;
    assert!(link.starts_with("http"), "an absolute link: {link}");

    let r = app
        .post(&invites, &admin, json!({"email": "grace@example.org"}))
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.body,
        json!(["This user already has been invited for this team."])
    );
    let r = app
        .post(&invites, &admin, json!({"email": "not an address"}))
        .await;
    assert_eq!(r.status, 400);
    assert!(r.body["email"][0].is_string());

    let list = app.get(&invites, &admin).await.body;
    assert_eq!(emails(&list), ["grace@example.org"]);
    assert_eq!(
        app.get(&format!("{invites}{id}/"), &admin).await.body["email"],
        "grace@example.org"
    );
    assert_eq!(
        app.delete(&format!("{invites}{id}/"), &admin).await.status,
        204
    );
    let path = link
        .split_once("/invite/")
        .map(|(_, t)| format!("/invite/{t}"));
    let page = Browser::new(&app).get(&path.expect("path")).await;
    assert_eq!(page.status, 404, "a withdrawn invitation's link is dead");
}

#[tokio::test]
async fn members_and_invitations_need_can_change_teams_and_stay_within_reach() {
    let app = TestApp::spawn().await;
    let (admin, team) = arrange(&app).await;
    let reader = app.token("acme", &["can_view_orders"]).await;
    assert_eq!(
        app.get(&format!("{TEAMS}{team}/members/"), &reader)
            .await
            .status,
        403
    );
    let r = app
        .post(
            TEAMS,
            &admin,
            json!({"name": "Owners", "all_events": true, "can_change_teams": true,
                   "can_change_organizer_settings": true}),
        )
        .await;
    let owners = r.body["id"].as_i64().expect("id");
    let team_admin = app.token("acme", &["can_change_teams"]).await;
    let r = app
        .post(
            &format!("{TEAMS}{owners}/invites/"),
            &team_admin,
            json!({"email": "eve@example.org"}),
        )
        .await;
    assert_eq!(r.status, 403, "more than the caller holds: {}", r.body);
    assert!(outbox(&app.db).await.is_empty(), "no mail for a refusal");
    let r = app
        .post(
            &format!("{TEAMS}{team}/invites/"),
            &admin,
            json!({"email": "eve@example.org"}),
        )
        .await;
    assert_eq!(r.status, 201);
    app.organizer("other").await;
    let stranger = app.admin_token("other").await;
    assert_eq!(
        app.get(&format!("{TEAMS}{team}/invites/"), &stranger)
            .await
            .status,
        403,
        "another organizer's team"
    );
}

#[tokio::test]
async fn an_invited_person_creates_an_account_on_the_invitation_page_and_joins_the_team() {
    let app = TestApp::spawn().await;
    let (admin, team) = arrange(&app).await;
    app.post(
        &format!("{TEAMS}{team}/invites/"),
        &admin,
        json!({"email": "grace@example.org"}),
    )
    .await;
    let link = invitation_link(&app, "grace@example.org").await;
    let path = format!("/invite/{}", link.rsplit('/').next().expect("token"));

    let mut browser = Browser::new(&app);
    let page = browser.get(&path).await;
    assert_eq!(page.status, 200);
    let body = html(&page);
    assert!(body.contains("Box office") && body.contains("grace@example.org"));
    assert!(
        body.contains("<label for=\"password\">"),
        "fields are labelled"
    );
    let csrf = csrf_field(body);

    let r = browser
        .post(
            &path,
            &[
                ("csrfmiddlewaretoken", &csrf),
                ("fullname", "Grace Hopper"),
                ("password", USER_PASSWORD),
                ("password_repeat", "something else"),
            ],
        )
        .await;
    assert_eq!(r.status, 400, "passwords that differ");
    assert!(html(&r).contains("do not match"));
    let r = browser
        .post(
            &path,
            &[
                ("fullname", "Grace Hopper"),
                ("password", USER_PASSWORD),
                ("password_repeat", USER_PASSWORD),
            ],
        )
        .await;
    assert_eq!(r.status, 403, "a form without its CSRF token");

    let r = browser
        .post(
            &path,
            &[
                ("csrfmiddlewaretoken", &csrf),
                ("fullname", "Grace Hopper"),
                ("password", USER_PASSWORD),
                ("password_repeat", USER_PASSWORD),
            ],
        )
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
    assert_eq!(r.header("location"), Some("/account"));
    assert_eq!(browser.get("/account").await.status, 200, "signed in");

    let members = app.get(&format!("{TEAMS}{team}/members/"), &admin).await;
    assert_eq!(emails(&members.body), ["grace@example.org"]);
    assert_eq!(members.body["results"][0]["fullname"], "Grace Hopper");
    assert_eq!(
        app.get(&format!("{TEAMS}{team}/invites/"), &admin)
            .await
            .body["count"],
        0,
        "the invitation is used up"
    );
    assert_eq!(Browser::new(&app).get(&path).await.status, 404);
}

#[tokio::test]
async fn a_signed_in_user_accepts_an_invitation_with_the_sessions_csrf_token() {
    let app = TestApp::spawn().await;
    let (admin, team) = arrange(&app).await;
    app.post(
        &format!("{TEAMS}{team}/invites/"),
        &admin,
        json!({"email": "ada.work@example.org"}),
    )
    .await;
    let link = invitation_link(&app, "ada.work@example.org").await;
    let path = format!("/invite/{}", link.rsplit('/').next().expect("token"));
    user_of(&app, "ada@example.org", &[]).await;
    let mut browser = Browser::new(&app);
    let reply = browser
        .sign_in("ada@example.org", USER_PASSWORD, &path)
        .await;
    assert_eq!(reply.status, 303);
    assert_eq!(
        reply.header("location"),
        Some(path.as_str()),
        "back to the invitation"
    );

    let page = browser.get(&path).await;
    assert!(html(&page).contains("Accept the invitation"));
    let r = browser
        .post(&path, &[("csrfmiddlewaretoken", "0".repeat(64).as_str())])
        .await;
    assert_eq!(r.status, 403, "another token");
    let csrf = csrf_field(html(&page));
    let r = browser
        .post(&path, &[("csrfmiddlewaretoken", &csrf), ("accept", "1")])
        .await;
    assert_eq!(r.status, 303, "{}", r.body);
    let members = app.get(&format!("{TEAMS}{team}/members/"), &admin).await;
    assert_eq!(emails(&members.body), ["ada@example.org"]);
}

#[tokio::test]
async fn an_unknown_invitation_link_is_a_page_that_says_so() {
    let app = TestApp::spawn().await;
    let mut browser = Browser::new(&app);
    for path in ["/invite/nonsense", &format!("/invite/{}", "a".repeat(64))] {
        let page = browser.get(path).await;
        assert_eq!(page.status, 404);
        assert!(html(&page).contains("not valid"));
    }
}
