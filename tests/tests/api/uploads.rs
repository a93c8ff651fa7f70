use std::time::Duration;

use poem::http::Method;
use sea_orm::EntityTrait;
use serde_json::json;
use tessera::db::entities::item::Entity as ItemRow;
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
    let r = upload(
        app,
        token,
        &[
            ("Content-Type", "image/png"),
            ("Content-Disposition", "attachment; filename=\"logo.png\""),
        ],
        PNG,
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    r.body["id"].as_str().expect("id").to_owned()
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
    assert!(
        r.body["detail"]
            .as_str()
            .expect("detail")
            .contains("Content-Disposition")
    );
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
async fn a_picture_is_an_image_and_a_pdf_upload_is_refused_without_being_used_up() {
    let (app, _, token) = catalogue_app().await;
    let r = upload(
        &app,
        &token,
        &[
            ("Content-Type", "application/pdf"),
            ("Content-Disposition", "attachment; filename=terms.pdf"),
        ],
        b"%PDF-1.4 not really a document",
    )
    .await;
    assert_eq!(r.status, 201, "PDF uploads stay possible: {}", r.body);
    let pdf = r.body["id"].as_str().expect("id").to_owned();
    let r = app
        .post(
            &format!("{EVENT}/items/"),
            &token,
            json!({"name": {"en": "T"}, "default_price": "1", "picture": pdf}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let message = r.body["picture"][0].as_str().expect("message");
    assert!(message.contains("image"), "{message}");
    let item_id = plain_item(&app, &token, "T").await;
    let one = format!("{EVENT}/items/{item_id}/");
    let r = app.patch(&one, &token, json!({"picture": pdf})).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(app.get(&one, &token).await.body["picture"], json!(null));

    let image = png(&app, &token).await;
    let r = app.patch(&one, &token, json!({"picture": image})).await;
    assert_eq!(r.status, 200, "{}", r.body);
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
