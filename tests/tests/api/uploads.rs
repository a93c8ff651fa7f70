use std::time::Duration;

use chrono::Utc;
use poem::http::Method;
use sea_orm::{ActiveModelTrait, EntityTrait, PaginatorTrait, Set};
use serde_json::json;
use tessera::db::entities::file;
use tessera::db::entities::item::Entity as ItemRow;
use tessera::domain::files::{MAX_SIZE, MAX_UNCLAIMED_FILES};
use tessera_tests::{Reply, TestApp};

use crate::catalogue_support::{EVENT, catalogue_app, hold, id, item, plain_item};

const PNG: &[u8] = b"\x89PNG\r\n\x1a\nnot really an image";

async fn upload(app: &TestApp, token: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
    let auth = format!("Token {token}");
    let mut all = vec![("Authorization", auth.as_str())];
    all.extend_from_slice(headers);
    app.raw(Method::POST, "/api/v1/upload", &all, body.to_vec())
        .await
}

async fn png(app: &TestApp, token: &str) -> String {
    named_png(app, token, "logo.png").await
}

/// Uploads [`PNG`] under the file name `name`; returns its file ID.
async fn named_png(app: &TestApp, token: &str, name: &str) -> String {
    let disposition = format!("attachment; filename=\"{name}\"");
    let r = upload(
        app,
        token,
        &[
            ("Content-Type", "image/png"),
            ("Content-Disposition", &disposition),
        ],
        PNG,
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    r.body["id"].as_str().expect("id").to_owned()
}

/// How many uploads are stored, claimed or not.
async fn stored(app: &TestApp) -> u64 {
    file::Entity::find().count(&app.db).await.expect("count")
}

#[tokio::test]
async fn an_uploaded_picture_becomes_an_items_public_url_and_stays_when_sent_back() {
    let (app, _, token) = catalogue_app().await;
    let file = png(&app, &token).await;
    assert!(file.starts_with("file:"));
    let it = item(
        &app,
        &token,
        json!({"name": {"en": "T"}, "default_price": "1", "picture": file}),
    )
    .await;
    let url = it["picture"].as_str().expect("url").to_owned();
    assert!(url.starts_with("http://tessera.test/media/"), "{url}");
    assert!(url.ends_with("/logo.png"), "{url}");

    let path = url.trim_start_matches("http://tessera.test");
    let served = app.raw(Method::GET, path, &[], Vec::new()).await;
    assert_eq!(served.status, 200);
    assert_eq!(served.header("content-type"), Some("image/png"));

    let one = format!("{EVENT}/items/{}/", id(&it));
    let r = app.patch(&one, &token, json!({"picture": url})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["picture"], url.as_str());
    let r = app.patch(&one, &token, json!({"name": {"en": "U"}})).await;
    assert_eq!(r.body["picture"], url.as_str());
    let r = app.patch(&one, &token, json!({"picture": null})).await;
    assert_eq!(r.body["picture"], json!(null));
}

#[tokio::test]
async fn a_file_id_works_once_and_only_for_the_token_that_uploaded_it() {
    let (app, _, token) = catalogue_app().await;
    let other = app.admin_token("acme").await;
    let file = png(&app, &token).await;
    let item_id = plain_item(&app, &token, "T").await;
    let one = format!("{EVENT}/items/{item_id}/");

    let r = app.patch(&one, &other, json!({"picture": file})).await;
    assert_eq!(r.status, 400);
    assert!(r.body["picture"][0].is_string());
    let r = app.patch(&one, &token, json!({"picture": file})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let second = plain_item(&app, &token, "U").await;
    let r = app
        .patch(
            &format!("{EVENT}/items/{second}/"),
            &token,
            json!({"picture": file}),
        )
        .await;
    assert_eq!(r.status, 400);
    let r = app
        .patch(&one, &token, json!({"picture": "file:doesnotexist"}))
        .await;
    assert_eq!(r.status, 400);
    let r = app
        .patch(
            &one,
            &token,
            json!({"picture": "https://example.com/x.png"}),
        )
        .await;
    assert_eq!(r.status, 400);
}

#[tokio::test]
async fn an_upload_needs_its_type_its_file_name_a_body_and_a_token() {
    let (app, _, token) = catalogue_app().await;
    let disposition = ("Content-Disposition", "attachment; filename=a.png");
    let r = upload(&app, &token, &[disposition], PNG).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body["detail"].is_string());
    let r = upload(&app, &token, &[("Content-Type", "image/png")], PNG).await;
    assert_eq!(r.status, 400);
    assert!(r.body["Content-Disposition"][0].is_string(), "{}", r.body);
    let r = upload(
        &app,
        &token,
        &[
            ("Content-Type", "image/png"),
            ("Content-Disposition", "inline"),
        ],
        PNG,
    )
    .await;
    assert_eq!(r.status, 400);
    let r = upload(
        &app,
        &token,
        &[("Content-Type", "image/png"), disposition],
        b"",
    )
    .await;
    assert_eq!(r.status, 400);
    let huge = vec![0u8; 10 * 1024 * 1024 + 1];
    let r = upload(
        &app,
        &token,
        &[("Content-Type", "image/png"), disposition],
        &huge,
    )
    .await;
    assert_eq!(r.status, 413);
    let r = upload(
        &app,
        &token,
        &[("Content-Type", "application/x-msdownload"), disposition],
        PNG,
    )
    .await;
    assert_eq!(r.status, 415);
    let r = app
        .raw(
            Method::POST,
            "/api/v1/upload",
            &[("Content-Type", "image/png"), disposition],
            PNG.to_vec(),
        )
        .await;
    assert_eq!(r.status, 401);
}

#[tokio::test]
async fn uploads_that_no_item_claimed_are_not_served() {
    let (app, _, token) = catalogue_app().await;
    let file = png(&app, &token).await;
    let key = file.trim_start_matches("file:");
    let r = app
        .raw(
            Method::GET,
            &format!("/media/{key}/logo.png"),
            &[],
            Vec::new(),
        )
        .await;
    assert_eq!(r.status, 404);
}

#[tokio::test]
async fn any_type_no_field_takes_is_refused_as_unsupported() {
    let (app, _, token) = catalogue_app().await;
    for (content_type, body) in [
        ("image/svg+xml", b"<svg onload=alert(1)></svg>".as_slice()),
        ("text/html", b"<script>alert(1)</script>".as_slice()),
    ] {
        let r = upload(
            &app,
            &token,
            &[
                ("Content-Type", content_type),
                ("Content-Disposition", "attachment; filename=x.png"),
            ],
            body,
        )
        .await;
        assert_eq!(r.status, 415, "{content_type}: {}", r.body);
        assert!(r.body["detail"].is_string());
    }
    assert_eq!(stored(&app).await, 0);
}

#[tokio::test]
async fn a_picture_sent_as_octet_stream_takes_the_type_of_its_extension() {
    let (app, _, token) = catalogue_app().await;
    let octet = |name: &'static str| {
        let disposition = format!("attachment; filename={name}");
        let (app, token) = (&app, &token);
        async move {
            let headers = [
                ("Content-Type", "application/octet-stream"),
                ("Content-Disposition", disposition.as_str()),
            ];
            upload(app, token, &headers, PNG).await
        }
    };
    let r = octet("logo.PNG").await;
    assert_eq!(r.status, 201, "{}", r.body);
    let row = app.stored_file(r.body["id"].as_str().expect("id")).await;
    assert_eq!(row.content_type, "image/png");

    // No picture extension: the type is unknown. A JPEG name on PNG bytes: not a JPEG.
    assert_eq!(octet("logo.bin").await.status, 415);
    assert_eq!(octet("logo.jpg").await.status, 400);
    assert_eq!(stored(&app).await, 1);
}

#[tokio::test]
async fn a_stored_upload_of_a_type_pictures_do_not_take_is_refused_without_being_used_up() {
    let (app, _, token) = catalogue_app().await;
    // Uploads of other types are refused now; one stored before still must not become a
    // picture.
    let item_id = plain_item(&app, &token, "T").await;
    let one = format!("{EVENT}/items/{item_id}/");
    let file = png(&app, &token).await;
    let row = app.stored_file(&file).await;
    let pdf = file::ActiveModel {
        id: Set("0123456789abcdef0123456789abcdef".into()),
        owner: Set(row.owner),
        filename: Set("terms.pdf".into()),
        content_type: Set("application/pdf".into()),
        data: Set(b"%PDF-1.4".to_vec()),
        created: Set(Utc::now()),
        expires: Set(row.expires),
    }
    .insert(&app.db)
    .await
    .expect("insert");
    let pdf = format!("file:{}", pdf.id);
    let r = app.patch(&one, &token, json!({"picture": pdf})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    let message = r.body["picture"][0].as_str().expect("message");
    assert!(message.contains("image"), "{message}");
    assert_eq!(app.get(&one, &token).await.body["picture"], json!(null));

    let r = app.patch(&one, &token, json!({"picture": file})).await;
    assert_eq!(r.status, 200, "{}", r.body);
}

#[tokio::test]
async fn an_upload_without_any_write_permission_is_refused() {
    let (app, _, _) = catalogue_app().await;
    let nothing = app.token("acme", &[]).await;
    let readers = app
        .token("acme", &["can_view_orders", "can_view_vouchers"])
        .await;
    let other_writer = app.token("acme", &["can_change_vouchers"]).await;
    for token in [&nothing, &readers, &other_writer] {
        let r = upload(
            &app,
            token,
            &[
                ("Content-Type", "image/png"),
                ("Content-Disposition", "attachment; filename=logo.png"),
            ],
            PNG,
        )
        .await;
        assert_eq!(r.status, 403, "{}", r.body);
        assert!(
            r.body["detail"]
                .as_str()
                .expect("detail")
                .contains("can_change_items")
        );
    }
    assert_eq!(stored(&app).await, 0, "nothing was stored");

    // Whoever may change items or orders, whose fields take files, may upload.
    for writer in ["can_change_items", "can_change_orders"] {
        let token = app.token("acme", &[writer]).await;
        png(&app, &token).await;
    }
    assert_eq!(stored(&app).await, 2);
}

#[tokio::test]
async fn an_upload_whose_bytes_are_not_the_declared_image_type_is_refused() {
    let (app, _, token) = catalogue_app().await;
    for (content_type, body) in [
        (
            "image/png",
            b"<html><script>alert(1)</script></html>".as_slice(),
        ),
        ("image/png", b"GIF89a a gif, not a png".as_slice()),
        ("image/jpeg", PNG),
        ("image/gif", b"%PDF-1.4".as_slice()),
        ("image/webp", b"RIFF\0\0\0\0WAVEfmt ".as_slice()),
    ] {
        let r = upload(
            &app,
            &token,
            &[
                ("Content-Type", content_type),
                ("Content-Disposition", "attachment; filename=logo.png"),
            ],
            body,
        )
        .await;
        assert_eq!(r.status, 400, "{content_type}: {}", r.body);
        let detail = r.body["detail"].as_str().expect("detail");
        assert!(detail.contains(content_type), "{detail}");
    }
    assert_eq!(stored(&app).await, 0);
}

#[tokio::test]
async fn the_unclaimed_uploads_of_one_caller_are_capped_until_some_are_used() {
    let (app, _, token) = catalogue_app().await;
    let mut ids = Vec::new();
    // Bounded: the cap must refuse the upload after the last allowed one.
    for _ in 0..MAX_UNCLAIMED_FILES {
        ids.push(png(&app, &token).await);
    }
    let png_headers = [
        ("Content-Type", "image/png"),
        ("Content-Disposition", "attachment; filename=logo.png"),
    ];
    let r = upload(&app, &token, &png_headers, PNG).await;
    assert_eq!(r.status, 429, "{}", r.body);
    assert!(r.body["detail"].as_str().expect("detail").contains("100"));
    let retry: u64 = r
        .header("retry-after")
        .expect("Retry-After")
        .parse()
        .expect("seconds");
    assert!((1..=24 * 3600).contains(&retry), "{retry}");
    assert_eq!(stored(&app).await, MAX_UNCLAIMED_FILES);

    // The cap is per caller, and a claimed upload no longer counts.
    let other = app.admin_token("acme").await;
    png(&app, &other).await;
    item(
        &app,
        &token,
        json!({"name": {"en": "T"}, "default_price": "1", "picture": ids[0]}),
    )
    .await;
    png(&app, &token).await;
    let r = upload(&app, &token, &png_headers, PNG).await;
    assert_eq!(r.status, 429, "{}", r.body);
}

#[tokio::test]
async fn concurrent_uploads_do_not_go_beyond_the_cap() {
    let (app, _, token) = catalogue_app().await;
    let below = MAX_UNCLAIMED_FILES - 3;
    for _ in 0..below {
        png(&app, &token).await;
    }
    let png_headers = [
        ("Content-Type", "image/png"),
        ("Content-Disposition", "attachment; filename=logo.png"),
    ];
    let replies =
        futures::future::join_all((0..8).map(|_| upload(&app, &token, &png_headers, PNG))).await;
    let created = replies.iter().filter(|r| r.status == 201).count();
    let refused = replies.iter().filter(|r| r.status == 429).count();
    assert_eq!((created, refused), (3, 5), "{replies:?}");
    assert_eq!(stored(&app).await, MAX_UNCLAIMED_FILES);
}

#[tokio::test]
async fn the_unclaimed_bytes_of_one_caller_are_capped() {
    let (app, _, token) = catalogue_app().await;
    let mut big = PNG.to_vec();
    big.resize(MAX_SIZE, 0);
    let png_headers = [
        ("Content-Type", "image/png"),
        ("Content-Disposition", "attachment; filename=big.png"),
    ];
    // 10 files of 10 MiB fill the 100 MiB.
    for _ in 0..10 {
        let r = upload(&app, &token, &png_headers, &big).await;
        assert_eq!(r.status, 201, "{}", r.body);
    }
    let r = upload(&app, &token, &png_headers, PNG).await;
    assert_eq!(r.status, 429, "{}", r.body);
    assert!(r.body["detail"].as_str().expect("detail").contains("MiB"));
    assert_eq!(stored(&app).await, 10);
}

#[tokio::test]
async fn served_media_carries_nosniff_a_sandbox_and_a_safe_file_name() {
    let (app, _, token) = catalogue_app().await;
    for (sent, safe) in [
        ("<script>.png", "_script_.png"),
        ("a b%2F.png", "a_b_2F.png"),
        ("x.html", "x.html.png"),
    ] {
        let file = named_png(&app, &token, sent).await;
        let it = item(
            &app,
            &token,
            json!({"name": {"en": "T"}, "default_price": "1", "picture": file}),
        )
        .await;
        let url = it["picture"].as_str().expect("url");
        let key = file.trim_start_matches("file:");
        assert_eq!(url, format!("http://tessera.test/media/{key}/{safe}"));

        let served = app
            .raw(
                Method::GET,
                url.trim_start_matches("http://tessera.test"),
                &[],
                Vec::new(),
            )
            .await;
        assert_eq!(served.status, 200);
        assert_eq!(served.header("content-type"), Some("image/png"));
        assert_eq!(served.header("x-content-type-options"), Some("nosniff"));
        let csp = served.header("content-security-policy").expect("CSP");
        assert!(
            csp.contains("default-src 'none'") && csp.contains("sandbox"),
            "{csp}"
        );
        assert!(!csp.contains("unsafe"), "{csp}");
        assert_eq!(
            served.header("content-disposition"),
            Some(format!("inline; filename=\"{safe}\"").as_str())
        );
    }
}

#[tokio::test]
async fn a_stored_file_of_an_unaccepted_type_is_served_only_as_a_download() {
    let (app, _, _) = catalogue_app().await;
    // Stored before types were checked, and claimed: never served as what it claims to be.
    file::ActiveModel {
        id: Set("feedfacefeedfacefeedfacefeedface".into()),
        owner: Set("token:0".into()),
        filename: Set("<b>page.html".into()),
        content_type: Set("text/html".into()),
        data: Set(b"<script>alert(document.cookie)</script>".to_vec()),
        created: Set(Utc::now()),
        expires: Set(None),
    }
    .insert(&app.db)
    .await
    .expect("insert");
    let served = app
        .raw(
            Method::GET,
            "/media/feedfacefeedfacefeedfacefeedface/page.html",
            &[],
            Vec::new(),
        )
        .await;
    assert_eq!(served.status, 200);
    assert_eq!(
        served.header("content-type"),
        Some("application/octet-stream")
    );
    assert_eq!(
        served.header("content-disposition"),
        Some("attachment; filename=\"_b_page.html\"")
    );
    assert_eq!(served.header("x-content-type-options"), Some("nosniff"));
    assert!(
        served
            .header("content-security-policy")
            .is_some_and(|c| c.contains("sandbox"))
    );
}

#[tokio::test]
async fn a_picture_sent_with_a_change_that_fails_stays_unclaimed() {
    let (app, _, token) = catalogue_app().await;
    let file = png(&app, &token).await;
    let doomed = plain_item(&app, &token, "Doomed").await;
    let one = format!("{EVENT}/items/{doomed}/");
    let held = hold::<ItemRow>(&app, doomed).await;
    let (r, ()) = tokio::join!(app.patch(&one, &token, json!({"picture": file})), async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        ItemRow::delete_by_id(doomed)
            .exec(&held)
            .await
            .expect("delete");
        held.commit().await.expect("commit");
    });
    assert_eq!(r.status, 403, "{}", r.body);
    // The upload was not used up by the change that failed.
    let it = item(
        &app,
        &token,
        json!({"name": {"en": "T"}, "default_price": "1", "picture": file}),
    )
    .await;
    assert!(it["picture"].as_str().expect("url").ends_with("/logo.png"));
}

#[tokio::test]
async fn an_oauth_client_refreshing_its_token_keeps_the_cap_of_its_user_and_application() {
    let app = TestApp::spawn().await;
    let org = app.organizer("acme").await;
    let user = tessera_tests::user_of(&app, "ada@example.com", &[org]).await;
    let c = crate::oauth::client(&app).await;
    let (access, refresh_token) = crate::oauth::tokens(&app, &c, user, "read write", &[org]).await;
    let bearer_upload = |access: String| {
        let app = &app;
        async move {
            let auth = format!("Bearer {access}");
            app.raw(
                Method::POST,
                "/api/v1/upload",
                &[
                    ("Authorization", &auth),
                    ("Content-Type", "image/png"),
                    ("Content-Disposition", "attachment; filename=logo.png"),
                ],
                PNG.to_vec(),
            )
            .await
        }
    };
    for _ in 0..MAX_UNCLAIMED_FILES {
        let r = bearer_upload(access.clone()).await;
        assert_eq!(r.status, 201, "{}", r.body);
    }
    let r = crate::oauth::refresh(&app, &c, &refresh_token).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let fresh = r.body["access_token"].as_str().expect("access").to_owned();
    let r = bearer_upload(fresh).await;
    assert_eq!(
        r.status, 429,
        "a new access token is the same caller: {}",
        r.body
    );
}
