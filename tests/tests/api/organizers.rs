use tessera_tests::TestApp;

#[tokio::test]
async fn the_organizer_list_shows_only_the_callers_organizer() {
    let app = TestApp::spawn().await;
    let id = app.organizer("acme").await;
    app.organizer("other").await;
    let token = app.token("acme", &[]).await;
    let r = app.get("/api/v1/organizers/", &token).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.body["count"], 1);
    assert_eq!(r.body["results"][0]["slug"], "acme");
    assert_eq!(r.body["results"][0]["id"], id);
    assert_eq!(r.body["results"][0]["name"], "acme Ltd");
}

#[tokio::test]
async fn an_organizer_is_shown_with_id_name_and_slug() {
    let app = TestApp::spawn().await;
    let id = app.organizer("acme").await;
    let token = app.token("acme", &[]).await;
    let r = app.get("/api/v1/organizers/acme/", &token).await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body,
        serde_json::json!({"id": id, "name": "acme Ltd", "slug": "acme"})
    );
}

#[tokio::test]
async fn another_organizer_is_403() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    app.organizer("other").await;
    let token = app.token("acme", &[]).await;
    assert_eq!(
        app.get("/api/v1/organizers/other/", &token).await.status,
        403
    );
}
