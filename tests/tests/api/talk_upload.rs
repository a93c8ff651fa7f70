//! The talk side's upload, `POST /api/upload/`: who may upload, which files are taken, and
//! who may use what was uploaded.

use poem::http::Method;
use sea_orm::{EntityTrait, PaginatorTrait};
use serde_json::json;
use tessera::db::entities::file;
use tessera::domain::files::{DOCUMENT_TYPES, PICTURE_TYPES, claim_for_user};
use tessera::domain::permissions::Permission;
use tessera::domain::talk::endpoints::{Action, Endpoints};
use tessera::http::ApiError;
use tessera_tests::talk::{PDF, PNG, conference, send_upload as send, talk_user, user_token};
use tessera_tests::{Reply, TestApp, user_of};

const UPLOAD: &str = "/api/upload/";

/// An organizer `acme` and a user with every permission there (a team of all events).
async fn organiser(app: &TestApp, email: &str) -> i64 {
    let org = app.organizer("acme").await;
    user_of(app, email, &[org]).await
}

/// Ada, an organiser of `acme`, and her token that may do anything; the uploader of most
/// tests.
async fn organiser_token(app: &TestApp) -> (i64, String) {
    let user = organiser(app, "ada@example.org").await;
    (
        user,
        user_token(app, user, &Endpoints::all_write(), None).await,
    )
}

async fn upload(
    app: &TestApp,
    token: Option<&str>,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Reply {
    let auth = token.map(|t| format!("Token {t}"));
    let mut all: Vec<(&str, &str)> = auth.iter().map(|a| ("Authorization", a.as_str())).collect();
    all.extend_from_slice(headers);
    app.raw(Method::POST, UPLOAD, &all, body.to_vec()).await
}

/// How many uploads are stored.
async fn stored(app: &TestApp) -> u64 {
    file::Entity::find().count(&app.db).await.expect("count")
}

fn detail(r: &Reply) -> &str {
    r.body["detail"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn a_pdf_and_a_png_are_stored_for_the_uploading_user() {
    let app = TestApp::spawn().await;
    let (user, token) = organiser_token(&app).await;

    let r = send(&app, &token, "application/pdf", "talk.pdf", PDF).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.body["id"].as_str().expect("id");
    assert!(id.starts_with("file:"), "{id}");
    let row = app.stored_file(id).await;
    assert_eq!(row.owner, format!("user:{user}"));
    assert_eq!(row.filename, "talk.pdf");
    assert_eq!(row.content_type, "application/pdf");
    assert_eq!(row.data, PDF);
    let expires = row.expires.expect("unused uploads expire");
    let lifetime = expires - row.created;
    assert_eq!(lifetime, chrono::Duration::hours(24));

    // A charset parameter is no part of the type; the extension's case does not matter.
    let r = send(&app, &token, "image/png; charset=binary", "Avatar.PNG", PNG).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert!(
        r.body["id"]
            .as_str()
            .is_some_and(|i| i.starts_with("file:"))
    );
    assert_eq!(stored(&app).await, 2);
}

#[tokio::test]
async fn office_documents_text_and_archives_are_taken_with_their_extensions() {
    let app = TestApp::spawn().await;
    let (_, token) = organiser_token(&app).await;
    let cases = [
        ("application/msword", "a.doc"),
        (
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
            "a.docx",
        ),
        ("application/vnd.ms-excel", "a.xls"),
        (
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            "a.xlsx",
        ),
        ("application/vnd.ms-powerpoint", "a.ppt"),
        (
            "application/vnd.openxmlformats-officedocument.presentationml.presentation",
            "a.pptx",
        ),
        ("application/vnd.oasis.opendocument.text", "a.odt"),
        ("application/vnd.oasis.opendocument.spreadsheet", "a.ods"),
        ("application/vnd.oasis.opendocument.presentation", "a.odp"),
        ("text/plain", "notes.txt"),
        ("text/csv", "slots.csv"),
        ("application/zip", "slides.zip"),
    ];
    for (content_type, name) in cases {
        let r = send(&app, &token, content_type, name, b"PK\x03\x04 contents").await;
        assert_eq!(r.status, 201, "{content_type}: {}", r.body);
    }
    assert_eq!(stored(&app).await, cases.len() as u64);
}

#[tokio::test]
async fn an_upload_needs_its_content_type_and_an_attachment_file_name() {
    let app = TestApp::spawn().await;
    let (_, token) = organiser_token(&app).await;
    let disposition = ("Content-Disposition", "attachment; filename=\"talk.pdf\"");

    let r = upload(&app, Some(&token), &[disposition], PDF).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(detail(&r).contains("Content-Type"), "{}", r.body);

    let r = upload(
        &app,
        Some(&token),
        &[("Content-Type", "application/pdf")],
        PDF,
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(detail(&r).contains("Content-Disposition"), "{}", r.body);

    for bad in [
        "inline; filename=\"talk.pdf\"",
        "attachment",
        "attachment; filename=\"\"",
    ] {
        let r = upload(
            &app,
            Some(&token),
            &[
                ("Content-Type", "application/pdf"),
                ("Content-Disposition", bad),
            ],
            PDF,
        )
        .await;
        assert_eq!(r.status, 400, "{bad}: {}", r.body);
    }

    let r = send(&app, &token, "application/pdf", "talk.pdf", b"").await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(detail(&r).contains("empty"), "{}", r.body);
    assert_eq!(stored(&app).await, 0);
}

#[tokio::test]
async fn a_file_name_without_an_extension_of_its_type_is_400() {
    let app = TestApp::spawn().await;
    let (_, token) = organiser_token(&app).await;
    for name in ["talk.png", "talk", "talk.pdf.exe", "pdf"] {
        let r = send(&app, &token, "application/pdf", name, PDF).await;
        assert_eq!(r.status, 400, "{name}: {}", r.body);
        assert!(detail(&r).contains("invalid extension"), "{}", r.body);
    }
    assert_eq!(stored(&app).await, 0);
}

#[tokio::test]
async fn types_outside_the_allow_list_are_400() {
    let app = TestApp::spawn().await;
    let (_, token) = organiser_token(&app).await;
    for (content_type, name, body) in [
        ("text/html", "evil.html", &b"<script>alert(1)</script>"[..]),
        ("image/svg+xml", "logo.svg", b"<svg onload=alert(1)/>"),
        ("application/octet-stream", "file.bin", b"\0\x01"),
        ("application/javascript", "app.js", b"alert(1)"),
    ] {
        let r = send(&app, &token, content_type, name, body).await;
        assert_eq!(r.status, 400, "{content_type}: {}", r.body);
        assert!(detail(&r).contains("not allowed"), "{}", r.body);
    }
    assert_eq!(stored(&app).await, 0);
}

#[tokio::test]
async fn a_file_sent_as_octet_stream_takes_the_type_of_its_extension() {
    let app = TestApp::spawn().await;
    let (_, token) = organiser_token(&app).await;
    let r = send(&app, &token, "application/octet-stream", "slides.pdf", PDF).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let row = app.stored_file(r.body["id"].as_str().expect("id")).await;
    assert_eq!(row.content_type, "application/pdf");

    // An image must still be what its extension says.
    let r = send(&app, &token, "application/octet-stream", "avatar.png", PDF).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(stored(&app).await, 1);
}

#[tokio::test]
async fn an_image_that_is_not_what_its_type_says_is_400() {
    let app = TestApp::spawn().await;
    let (_, token) = organiser_token(&app).await;
    for (content_type, name, body) in [
        (
            "image/png",
            "fake.png",
            &b"this is not a valid png image"[..],
        ),
        ("image/jpeg", "fake.jpg", b"<html>"),
        ("image/png", "jpeg.png", b"\xff\xd8\xff\xe0 a jpeg"),
        ("image/bmp", "fake.bmp", b"not a bitmap at all"),
        ("image/tiff", "fake.tiff", b"not a tiff"),
    ] {
        let r = send(&app, &token, content_type, name, body).await;
        assert_eq!(r.status, 400, "{name}: {}", r.body);
        assert!(detail(&r).contains("valid image"), "{}", r.body);
    }
    assert_eq!(stored(&app).await, 0);
}

#[tokio::test]
async fn a_file_beyond_the_configured_limit_is_413() {
    let app = TestApp::spawn_with(|c| c.talk_upload_max_bytes = 64).await;
    let (_, token) = organiser_token(&app).await;
    let exactly = vec![b'a'; 64];
    let r = send(&app, &token, "text/plain", "a.txt", &exactly).await;
    assert_eq!(r.status, 201, "{}", r.body);

    // Too large by what arrives (no length is declared in-process) ...
    let larger = vec![b'a'; 65];
    let r = send(&app, &token, "text/plain", "a.txt", &larger).await;
    assert_eq!(r.status, 413, "{}", r.body);
    assert!(detail(&r).contains("too large"), "{}", r.body);

    // ... and by its declared length, refused before it is read.
    let auth = format!("Token {token}");
    let headers = [
        ("Authorization", auth.as_str()),
        ("Content-Type", "text/plain"),
        ("Content-Disposition", "attachment; filename=a.txt"),
        ("Content-Length", "65"),
    ];
    let r = app.raw(Method::POST, UPLOAD, &headers, larger).await;
    assert_eq!(r.status, 413, "{}", r.body);
    assert_eq!(stored(&app).await, 1);
}

#[tokio::test]
async fn the_upload_takes_bodies_larger_than_other_requests() {
    // Other requests stay within max_body_bytes; the upload has its own limit.
    let app = TestApp::spawn_with(|c| c.max_body_bytes = 1024).await;
    let (_, token) = organiser_token(&app).await;
    let mut big = PDF.to_vec();
    big.resize(256 * 1024, b' ');
    let r = send(&app, &token, "application/pdf", "big.pdf", &big).await;
    assert_eq!(r.status, 201, "{}", r.body);
}

#[tokio::test]
async fn an_anonymous_upload_is_401_and_a_read_only_token_403() {
    let app = TestApp::spawn().await;
    let user = organiser(&app, "ada@example.org").await;
    let headers = [
        ("Content-Type", "application/pdf"),
        ("Content-Disposition", "attachment; filename=\"talk.pdf\""),
    ];
    let r = upload(&app, None, &headers, PDF).await;
    assert_eq!(r.status, 401, "{}", r.body);

    let read = user_token(&app, user, &Endpoints::all_read(), None).await;
    let r = upload(&app, Some(&read), &headers, PDF).await;
    assert_eq!(r.status, 403, "{}", r.body);
    // The caller is checked before anything about the file.
    let r = upload(&app, Some(&read), &[], b"").await;
    assert_eq!(r.status, 403, "{}", r.body);

    // Any write scope is enough.
    let mut one = Endpoints::all_read();
    one.0.insert("tags".into(), vec![Action::Create]);
    let narrow = user_token(&app, user, &one, None).await;
    let r = upload(&app, Some(&narrow), &headers, PDF).await;
    assert_eq!(r.status, 201, "{}", r.body);

    let r = upload(&app, Some("not-a-token"), &headers, PDF).await;
    assert_eq!(r.status, 401, "{}", r.body);
    assert_eq!(stored(&app).await, 1);
}

#[tokio::test]
async fn any_token_that_may_write_uploads_whatever_its_users_teams() {
    let app = TestApp::spawn().await;
    let c = conference(&app).await;
    // A reviewer may change nothing that takes files, yet uploads, as in pretalx.
    let r = send(&app, &c.reviewer, "application/pdf", "review.pdf", PDF).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let (reviewer, _) = talk_user(
        &app,
        "second-reviewer@example.org",
        c.organizer,
        &[Permission::Review],
    )
    .await;
    let read = user_token(&app, reviewer, &Endpoints::all_read(), None).await;
    let r = send(&app, &read, "application/pdf", "review.pdf", PDF).await;
    assert_eq!(r.status, 403, "a reviewer's read-only token: {}", r.body);
    // A user in no team at all.
    let loner = user_of(&app, "loner@example.org", &[]).await;
    let token = user_token(&app, loner, &Endpoints::all_write(), None).await;
    let r = send(&app, &token, "text/plain", "notes.txt", b"notes").await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(stored(&app).await, 2);
}

#[tokio::test]
async fn a_team_token_of_the_ticketing_side_is_401_on_the_talk_upload() {
    let app = TestApp::spawn().await;
    app.organizer("acme").await;
    let team = app.admin_token("acme").await;
    let r = send(&app, &team, "application/pdf", "talk.pdf", PDF).await;
    assert_eq!(r.status, 401, "{}", r.body);
    assert_eq!(stored(&app).await, 0);
}

#[tokio::test]
async fn an_upload_is_usable_once_and_only_by_the_user_who_uploaded_it() {
    let app = TestApp::spawn().await;
    let (ada, token) = organiser_token(&app).await;
    let grace = user_of(&app, "grace@example.org", &[]).await;
    let pdf = send(&app, &token, "application/pdf", "talk.pdf", PDF).await;
    let pdf = pdf.body["id"].as_str().expect("id").to_owned();
    let png = send(&app, &token, "image/png", "me.png", PNG).await;
    let png = png.body["id"].as_str().expect("id").to_owned();

    // Another user cannot use it; nor can anyone use a made-up or malformed ID.
    for (user, id) in [
        (grace, pdf.as_str()),
        (ada, "file:0123456789abcdef0123456789abcdef"),
        (ada, "0123456789abcdef"),
    ] {
        let e = ApiError::from(
            claim_for_user(&app.db, user, "resource", id, &DOCUMENT_TYPES)
                .await
                .expect_err("refused"),
        );
        assert_eq!(e.status().as_u16(), 400);
        assert!(e.body()["resource"][0].is_string(), "{}", e.body());
    }

    // A field that takes pictures refuses the PDF and leaves it usable.
    let e = ApiError::from(
        claim_for_user(&app.db, ada, "avatar", &pdf, &PICTURE_TYPES)
            .await
            .expect_err("refused"),
    );
    assert!(e.body()["avatar"][0].is_string(), "{}", e.body());

    let reference = claim_for_user(&app.db, ada, "resource", &pdf, &DOCUMENT_TYPES)
        .await
        .expect("claimed");
    assert!(reference.ends_with("/talk.pdf"), "{reference}");
    let again = claim_for_user(&app.db, ada, "resource", &pdf, &DOCUMENT_TYPES).await;
    assert!(again.is_err(), "an upload is used once");

    let avatar = claim_for_user(&app.db, ada, "avatar", &png, &PICTURE_TYPES)
        .await
        .expect("claimed");
    // A claimed file is served publicly; a PDF only as a download.
    let served = app
        .raw(Method::GET, &format!("/media/{reference}"), &[], Vec::new())
        .await;
    assert_eq!(served.status, 200);
    assert_eq!(
        served.header("content-disposition"),
        Some("attachment; filename=\"talk.pdf\"")
    );
    let served = app
        .raw(Method::GET, &format!("/media/{avatar}"), &[], Vec::new())
        .await;
    assert_eq!(served.status, 200);
    assert_eq!(served.header("content-type"), Some("image/png"));
}

#[tokio::test]
async fn an_expired_upload_cannot_be_used() {
    let app = TestApp::spawn().await;
    let (ada, token) = organiser_token(&app).await;
    let r = send(&app, &token, "application/pdf", "talk.pdf", PDF).await;
    let id = r.body["id"].as_str().expect("id").to_owned();
    tessera::db::execute(
        &app.db,
        "UPDATE files SET expires = $1",
        [(chrono::Utc::now() - chrono::Duration::seconds(1)).into()],
    )
    .await
    .expect("expire");
    let e = ApiError::from(
        claim_for_user(&app.db, ada, "resource", &id, &DOCUMENT_TYPES)
            .await
            .expect_err("expired"),
    );
    assert_eq!(e.status().as_u16(), 400);
    let message = e.body()["resource"][0].as_str().expect("message");
    assert_eq!(e.body(), &json!({ "resource": [message] }));
}
