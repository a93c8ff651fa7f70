//! Answers to file questions: uploads claimed by the order as private files, shown as URLs
//! of the API, served to callers who may read orders, kept, replaced and dropped with the
//! position's answers, and taken by ticket layouts as images (`pdf_image/`).

use poem::http::Method;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{Value, json};
use tessera::db::entities::file;
use tessera_tests::{Reply, TestApp};

use crate::selling_support::{EVENT, Shop, created, id, shop};

const PNG: &[u8] = b"\x89PNG\r\n\x1a\nthe first picture";
const OTHER_PNG: &[u8] = b"\x89PNG\r\n\x1a\nanother picture";
const PDF: &[u8] = b"%PDF-1.4 a signed form";

async fn upload(app: &TestApp, token: &str, content_type: &str, name: &str, body: &[u8]) -> String {
    let auth = format!("Token {token}");
    let disposition = format!("attachment; filename=\"{name}\"");
    let headers = [
        ("Authorization", auth.as_str()),
        ("Content-Type", content_type),
        ("Content-Disposition", disposition.as_str()),
    ];
    let r = app
        .raw(Method::POST, "/api/v1/upload", &headers, body.to_vec())
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    r.body["id"].as_str().expect("id").to_owned()
}

/// A shop whose ticket asks the file question `photo`.
async fn photo_shop() -> (Shop, i64) {
    let s = shop(None).await;
    let q = id(&created(
        &s.app,
        &format!("{EVENT}/questions/"),
        &s.token,
        json!({"question": {"en": "Photo"}, "type": "F", "items": [s.ticket],
               "identifier": "photo"}),
    )
    .await);
    (s, q)
}

async fn order_with(s: &Shop, question: i64, answer: &str) -> Reply {
    s.order(
        json!({"email": "ada@example.org", "positions": [{"item": s.ticket,
        "answers": [{"question": question, "answer": answer}]}]}),
    )
    .await
}

/// The path of the URL an answer shows.
fn path_of(answer: &Value) -> String {
    let url = answer.as_str().expect("answer text");
    url[url.find("/api/v1/").expect("an API URL")..].to_owned()
}

#[tokio::test]
async fn a_file_answer_is_served_through_the_api_and_never_publicly() {
    let (s, q) = photo_shop().await;
    let file_id = upload(&s.app, &s.token, "image/png", "me.png", PNG).await;
    let o = order_with(&s, q, &file_id).await;
    assert_eq!(o.status, 201, "{}", o.body);
    let p = &o.body["positions"][0];
    let answer = &p["answers"][0]["answer"];
    let path = path_of(answer);
    assert_eq!(
        path,
        format!("{EVENT}/orderpositions/{}/answer/{q}/", p["id"])
    );
    let served = s.app.get(&path, &s.token).await;
    assert_eq!(served.status, 200);
    assert_eq!(served.header("content-type"), Some("image/png"));
    let code = o.body["code"].as_str().expect("code");
    assert_eq!(
        served.header("content-disposition"),
        Some(format!("attachment; filename=\"CONF-{code}-1.png\"").as_str())
    );
    assert!(
        served
            .body
            .as_str()
            .is_some_and(|b| b.contains("the first picture"))
    );
    let stored = file::Entity::find()
        .filter(file::Column::Owner.like("private:%"))
        .one(&s.app.db)
        .await
        .expect("query")
        .expect("a private file");
    let public = s.app.get(&format!("/media/{}/me.png", stored.id), "").await;
    assert_eq!(public.status, 404);
    let read = s
        .app
        .get(&format!("{EVENT}/orders/{code}/"), &s.token)
        .await;
    assert_eq!(read.body["positions"][0]["answers"][0]["answer"], *answer);
}

#[tokio::test]
async fn a_file_answer_takes_an_unused_upload_of_the_caller_of_an_allowed_type() {
    let (s, q) = photo_shop().await;
    let file_id = upload(&s.app, &s.token, "image/png", "me.png", PNG).await;
    let unknown_item = s
        .order(json!({"positions": [{"item": 999_999,
            "answers": [{"question": q, "answer": file_id}]}]}))
        .await;
    assert_eq!(unknown_item.status, 400);
    assert_eq!(order_with(&s, q, &file_id).await.status, 201);
    let again = order_with(&s, q, &file_id).await;
    assert_eq!(again.status, 400);
    assert_eq!(
        again.body["positions"][0]["answers"][0],
        format!("The submitted file ID \"{file_id}\" was not found.")
    );
    let other = s.app.admin_token("acme").await;
    let theirs = upload(&s.app, &other, "image/png", "me.png", PNG).await;
    let r = order_with(&s, q, &theirs).await;
    assert_eq!(r.status, 400, "{}", r.body);
    let webp = upload(
        &s.app,
        &s.token,
        "image/webp",
        "me.webp",
        b"RIFF\0\0\0\0WEBPVP8 ",
    )
    .await;
    let r = order_with(&s, q, &webp).await;
    assert_eq!(r.status, 400);
    assert!(
        r.body["positions"][0]["answers"][0]
            .as_str()
            .is_some_and(|m| m.contains("file type that is not allowed")),
        "{}",
        r.body
    );
    let text = order_with(&s, q, "not a file").await;
    assert_eq!(text.status, 400);
}

#[tokio::test]
async fn a_file_answer_is_kept_replaced_and_dropped_with_the_positions_answers() {
    let (s, q) = photo_shop().await;
    let first = upload(&s.app, &s.token, "image/png", "me.png", PNG).await;
    let o = order_with(&s, q, &first).await;
    let position = o.body["positions"][0]["id"].clone();
    let url = format!("{EVENT}/orderpositions/{position}/");
    let patch = |answer: Value| {
        let (app, token, url) = (&s.app, &s.token, url.clone());
        async move { app.patch(&url, token, json!({"answers": answer})).await }
    };
    let kept = patch(json!([{"question": q, "answer": "file:keep"}])).await;
    assert_eq!(kept.status, 200, "{}", kept.body);
    let path = path_of(&kept.body["answers"][0]["answer"]);
    assert!(
        s.app
            .get(&path, &s.token)
            .await
            .body
            .as_str()
            .is_some_and(|b| b.contains("first"))
    );
    let second = upload(&s.app, &s.token, "image/png", "new.png", OTHER_PNG).await;
    let replaced = patch(json!([{"question": q, "answer": second}])).await;
    assert_eq!(replaced.status, 200, "{}", replaced.body);
    let served = s.app.get(&path, &s.token).await;
    assert!(served.body.as_str().is_some_and(|b| b.contains("another")));
    let private = || {
        file::Entity::find()
            .filter(file::Column::Owner.like("private:%"))
            .all(&s.app.db)
    };
    assert_eq!(private().await.expect("files").len(), 1);
    let dropped = patch(json!([])).await;
    assert_eq!(dropped.status, 200, "{}", dropped.body);
    assert_eq!(s.app.get(&path, &s.token).await.status, 404);
    assert!(private().await.expect("files").is_empty());
    let nothing_to_keep = patch(json!([{"question": q, "answer": "file:keep"}])).await;
    assert_eq!(nothing_to_keep.status, 400, "{}", nothing_to_keep.body);
}

#[tokio::test]
async fn a_ticket_layout_takes_an_image_answer_by_its_questions_identifier() {
    let (s, q) = photo_shop().await;
    let png = upload(&s.app, &s.token, "image/png", "me.png", PNG).await;
    let o = order_with(&s, q, &png).await;
    let position = o.body["positions"][0]["id"].clone();
    let image = |key: &str| format!("{EVENT}/orderpositions/{position}/pdf_image/{key}/");
    let r = s.app.get(&image("question_photo"), &s.token).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("image/png"));
    let unknown = s.app.get(&image("question_nothing"), &s.token).await;
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.body["detail"], "Unknown key");
    let pdf = upload(&s.app, &s.token, "application/pdf", "form.pdf", PDF).await;
    let o = order_with(&s, q, &pdf).await;
    assert_eq!(o.status, 201, "{}", o.body);
    let other = o.body["positions"][0]["id"].clone();
    let r = s
        .app
        .get(
            &format!("{EVENT}/orderpositions/{other}/pdf_image/question_photo/"),
            &s.token,
        )
        .await;
    assert_eq!(r.status, 404);
    assert_eq!(r.body["detail"], "No image available");
    let path = path_of(&o.body["positions"][0]["answers"][0]["answer"]);
    let served = s.app.get(&path, &s.token).await;
    assert_eq!(served.header("content-type"), Some("application/pdf"));
}

#[tokio::test]
async fn file_answers_are_served_only_to_callers_who_may_read_orders() {
    let (s, q) = photo_shop().await;
    let png = upload(&s.app, &s.token, "image/png", "me.png", PNG).await;
    let o = order_with(&s, q, &png).await;
    let path = path_of(&o.body["positions"][0]["answers"][0]["answer"]);
    let items_only = s.app.token("acme", &["can_change_items"]).await;
    assert_eq!(s.app.get(&path, &items_only).await.status, 403);
    assert_eq!(s.app.get(&path, "").await.status, 401);
    let unknown = path
        .replace("/answer/", "/answer/9")
        .replace(&format!("{q}/"), "9/");
    assert_eq!(s.app.get(&unknown, &s.token).await.status, 404);
}

#[tokio::test]
async fn an_answer_text_that_looks_like_a_stored_file_reaches_no_file() {
    let (s, q) = photo_shop().await;
    let picture = upload(&s.app, &s.token, "image/png", "logo.png", PNG).await;
    let item = s
        .app
        .patch(
            &format!("{EVENT}/items/{}/", s.ticket),
            &s.token,
            json!({"picture": picture}),
        )
        .await;
    assert_eq!(item.status, 200, "{}", item.body);
    let media = path_of_media(&item.body["picture"]);
    let key = media.split('/').nth(2).expect("key").to_owned();
    let text = id(&created(
        &s.app,
        &format!("{EVENT}/questions/"),
        &s.token,
        json!({"question": {"en": "Note"}, "type": "T", "items": [s.ticket]}),
    )
    .await);
    let forged = format!("file://{key}/logo.png");
    let o = s
        .order(json!({"positions": [{"item": s.ticket,
            "answers": [{"question": text, "answer": forged}]}]}))
        .await;
    assert_eq!(o.status, 201, "{}", o.body);
    let position = o.body["positions"][0]["id"].clone();
    let served = s
        .app
        .get(
            &format!("{EVENT}/orderpositions/{position}/answer/{text}/"),
            &s.token,
        )
        .await;
    assert_eq!(served.status, 404);
    let dropped = s
        .app
        .patch(
            &format!("{EVENT}/orderpositions/{position}/"),
            &s.token,
            json!({"answers": []}),
        )
        .await;
    assert_eq!(dropped.status, 200, "{}", dropped.body);
    assert_eq!(s.app.get(&media, "").await.status, 200, "the picture stays");
    let twice = upload(&s.app, &s.token, "image/png", "me.png", PNG).await;
    let r = s
        .order(json!({"positions": [
            {"item": s.ticket, "answers": [{"question": q, "answer": twice}]},
            {"item": s.ticket, "answers": [{"question": q, "answer": twice}]}]}))
        .await;
    assert_eq!(r.status, 400);
    assert!(
        r.body["positions"][1]["answers"][0]
            .as_str()
            .is_some_and(|m| m.contains("used for another answer")),
        "{}",
        r.body
    );
}

/// The path of a public media URL.
fn path_of_media(url: &Value) -> String {
    let url = url.as_str().expect("a URL");
    url[url.find("/media/").expect("a media URL")..].to_owned()
}
