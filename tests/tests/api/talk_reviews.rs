//! Reviews of the talk side: one per reviewer and submission (also when sent at once), never
//! of one's own submission, within the reviewer's tracks and while the review phase allows;
//! scores weighted by category, organisers' mean and median; what reviewers and organisers
//! see; anonymised phases; filters and expansions; score categories and review phases.

use std::sync::Arc;

use poem::http::Method;
use serde_json::{Value, json};
use tessera::domain::permissions::Permission;
use tessera::domain::talk::endpoints::{Action, Endpoints};
use tessera_tests::talk::{
    Conference, conference, create, results, rows, sql, talk_user, user_token,
};
use tessera_tests::{Reply, TestApp};

/// A conference with a session type, two tracks, a score category (weight 2.0, values 0, 1
/// and 2) and the reviewer's user ID.
struct Setup {
    c: Conference,
    kind: i64,
    track: i64,
    other_track: i64,
    category: i64,
    /// The IDs of the values 0, 1 and 2.
    values: Vec<i64>,
    reviewer_user: i64,
}

impl Setup {
    fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.c.base)
    }
}

fn id_of(object: &Value) -> i64 {
    object["id"].as_i64().expect("an integer ID")
}

async fn setup(app: &TestApp) -> Setup {
    let c = conference(app).await;
    let kind = id_of(&create(app, &c, "submission-types", json!({"name": {"en": "Talk"}})).await);
    let track = id_of(
        &create(
            app,
            &c,
            "tracks",
            json!({"name": {"en": "Rust"}, "color": "#aa0000"}),
        )
        .await,
    );
    let other_track = id_of(
        &create(
            app,
            &c,
            "tracks",
            json!({"name": {"en": "Go"}, "color": "#00aa00"}),
        )
        .await,
    );
    let category = create(
        app,
        &c,
        "score-categories",
        json!({
            "name": {"en": "Impact"},
            "weight": "2.0",
            "scores": [
                {"value": "2", "label": "Yes"},
                {"value": "0", "label": "No"},
                {"value": "1", "label": "Maybe"},
            ],
        }),
    )
    .await;
    let values: Vec<i64> = category["scores"]
        .as_array()
        .expect("the category's values")
        .iter()
        .map(id_of)
        .collect();
    assert_eq!(category["scores"][0]["value"], "0.00", "{category}");
    assert_eq!(category["weight"], "2.0");
    let reviewer_user = user_id(app, "reviewer@example.org").await;
    Setup {
        c,
        kind,
        track,
        other_track,
        category: id_of(&category),
        values,
        reviewer_user,
    }
}

async fn user_id(app: &TestApp, email: &str) -> i64 {
    let r = rows(
        app,
        "SELECT id FROM users WHERE email = $1",
        vec![email.into()],
    )
    .await;
    r[0].try_get("", "id").expect("a user")
}

async fn user_code(app: &TestApp, user: i64) -> String {
    let r = rows(
        app,
        "SELECT code FROM users WHERE id = $1",
        vec![user.into()],
    )
    .await;
    r[0].try_get("", "code").expect("a code")
}

/// Creates a submission of the track with a speaker of this email address; gives its code.
async fn submit(app: &TestApp, s: &Setup, title: &str, track: i64, speaker: &str) -> String {
    let created = create(
        app,
        &s.c,
        "submissions",
        json!({"title": title, "submission_type": s.kind, "track": track}),
    )
    .await;
    let code = created["code"].as_str().expect("a code").to_owned();
    let r = app
        .post(
            &s.url(&format!("submissions/{code}/add-speaker/")),
            &s.c.write,
            json!({"email": speaker, "name": format!("Speaker {speaker}")}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    code
}

/// A reviewer in a team of their own (limited to `tracks` when any); gives their token and
/// user ID.
async fn reviewer(app: &TestApp, s: &Setup, email: &str, tracks: &[i64]) -> (String, i64) {
    let (user, team) = talk_user(app, email, s.c.organizer, &[Permission::Review]).await;
    for track in tracks {
        sql(
            app,
            "INSERT INTO team_tracks (team_id, track_id) VALUES ($1, $2)",
            vec![team.into(), (*track).into()],
        )
        .await;
    }
    (
        user_token(app, user, &Endpoints::all_write(), None).await,
        user,
    )
}

async fn review(app: &TestApp, s: &Setup, token: &str, code: &str, scores: &[i64]) -> Reply {
    app.post(
        &s.url("reviews/"),
        token,
        json!({"submission": code, "text": format!("About {code}"), "scores": scores}),
    )
    .await
}

async fn reviewed(app: &TestApp, s: &Setup, token: &str, code: &str, scores: &[i64]) -> i64 {
    let r = review(app, s, token, code, scores).await;
    assert_eq!(r.status, 201, "{}", r.body);
    id_of(&r.body)
}

/// Creates an active review phase with these fields; gives its ID.
async fn phase(app: &TestApp, s: &Setup, fields: Value) -> i64 {
    let mut body = json!({"name": "Review", "is_active": true});
    if let (Some(b), Some(f)) = (body.as_object_mut(), fields.as_object()) {
        b.extend(f.clone());
    }
    let r = app.post(&s.url("review-phases/"), &s.c.write, body).await;
    assert_eq!(r.status, 201, "{}", r.body);
    id_of(&r.body)
}

fn ids(r: &Reply) -> Vec<i64> {
    results(&r.body).iter().map(id_of).collect()
}

#[tokio::test]
async fn a_reviewer_reviews_a_submission_once_and_its_score_weighs_each_category() {
    let app = TestApp::spawn().await;
    let s = setup(&app).await;
    let half = create(
        &app,
        &s.c,
        "score-categories",
        json!({"name": "Style", "weight": "0.5", "scores": [{"value": "3", "label": "Good"}, {"value": "1"}]}),
    )
    .await;
    let good_style = id_of(&half["scores"][1]);
    let code = submit(&app, &s, "Ownership", s.track, "a@example.org").await;
    let r = review(&app, &s, &s.c.reviewer, &code, &[s.values[2], good_style]).await;
    assert_eq!(r.status, 201, "{}", r.body);
    // 2 × 2.0 + 3 × 0.5
    assert_eq!(r.body["score"], "5.50", "{}", r.body);
    assert_eq!(r.body["submission"], code.as_str());
    assert_eq!(r.body["text"], format!("About {code}"));
    assert_eq!(r.body["scores"][0]["value"], "2.00");
    assert_eq!(r.body["scores"][0]["label"], "Yes");
    assert_eq!(r.body["scores"][0]["category"], s.category);
    assert_eq!(r.body["answers"], json!([]));
    let code_of_reviewer = user_code(&app, s.reviewer_user).await;
    assert_eq!(r.body["user"], code_of_reviewer.as_str());
    let id = id_of(&r.body);

    let again = review(&app, &s, &s.c.reviewer, &code.to_lowercase(), &[]).await;
    assert_eq!(again.status, 400, "{}", again.body);
    assert_eq!(
        again.body["submission"][0],
        "You have already reviewed this submission."
    );
    let one = format!("reviews/{id}/");
    let r = app
        .patch(
            &s.url(&one),
            &s.c.reviewer,
            json!({"scores": [s.values[1], s.values[2]]}),
        )
        .await;
    assert_eq!(r.status, 400, "two values of one category: {}", r.body);
    assert!(r.body["scores"].is_array());
    let r = app
        .patch(&s.url(&one), &s.c.reviewer, json!({"scores": [999_999]}))
        .await;
    assert_eq!(r.status, 400, "an unknown value: {}", r.body);
    let r = app
        .patch(
            &s.url(&one),
            &s.c.reviewer,
            json!({"scores": [s.values[1]], "text": null}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["score"], "2.00");
    assert_eq!(r.body["text"], Value::Null);

    // A weight changed later recomputes the scores given.
    let r = app
        .patch(
            &s.url(&format!("score-categories/{}/", s.category)),
            &s.c.write,
            json!({"weight": "3.5"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = app.get(&s.url(&one), &s.c.reviewer).await;
    assert_eq!(r.body["score"], "3.50", "{}", r.body);

    // A required category must be scored.
    create(
        &app,
        &s.c,
        "score-categories",
        json!({"name": "Fit", "required": true, "scores": [{"value": "1"}]}),
    )
    .await;
    let other = submit(&app, &s, "Borrowing", s.track, "b@example.org").await;
    let r = review(&app, &s, &s.c.reviewer, &other, &[s.values[0]]).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body["scores"].is_array());
    let r = review(&app, &s, &s.c.reviewer, "NOSUCH", &[]).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body["submission"].is_array());

    let log = app.get(&s.url(&format!("{one}log/")), &s.c.reviewer).await;
    assert_eq!(log.status, 200, "{}", log.body);
    assert_eq!(log.body["count"], 2);
    assert_eq!(
        results(&log.body)[0]["action_type"],
        "tessera.review.update"
    );
    let r = app.delete(&s.url(&one), &s.c.reviewer).await;
    assert_eq!(r.status, 204, "{}", r.body);
    let r = app.get(&s.url(&one), &s.c.read).await;
    assert_eq!(r.status, 404, "{}", r.body);
}

#[tokio::test]
async fn organisers_see_every_review_with_mean_and_median_and_reviewers_see_neither() {
    let app = TestApp::spawn().await;
    let s = setup(&app).await;
    let code = submit(&app, &s, "Lifetimes", s.track, "a@example.org").await;
    let quiet = submit(&app, &s, "Unreviewed", s.track, "b@example.org").await;
    let (second, _) = reviewer(&app, &s, "second@example.org", &[]).await;
    let (third, _) = reviewer(&app, &s, "third@example.org", &[]).await;
    // Scores 0, 2 and 4: values 0, 1 and 2 at weight 2.0.
    let mut made = Vec::new();
    for (token, value) in [(&s.c.reviewer, 0), (&second, 1), (&third, 2)] {
        made.push(reviewed(&app, &s, token, &code, &[s.values[value]]).await);
    }
    let r = app
        .get(&s.url(&format!("submissions/{code}/")), &s.c.read)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["reviews"], json!(made));
    assert_eq!(r.body["mean_score"], 2.0);
    assert_eq!(r.body["median_score"], 2.0);
    // A fourth review without scores changes neither.
    let (fourth, _) = reviewer(&app, &s, "fourth@example.org", &[]).await;
    reviewed(&app, &s, &fourth, &code, &[]).await;
    let r = app
        .patch(
            &s.url(&format!("reviews/{}/", made[0])),
            &s.c.reviewer,
            json!({"scores": [s.values[2]]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = app.get(&s.url("submissions/"), &s.c.read).await;
    let listed: Vec<&Value> = results(&r.body)
        .iter()
        .filter(|x| x["code"] == code.as_str())
        .collect();
    // Scores 4, 2 and 4.
    assert_eq!(listed[0]["mean_score"], 3.3, "{}", r.body);
    assert_eq!(listed[0]["median_score"], 4.0);
    assert_eq!(listed[0]["reviews"].as_array().map(Vec::len), Some(4));
    let unreviewed: Vec<&Value> = results(&r.body)
        .iter()
        .filter(|x| x["code"] == quiet.as_str())
        .collect();
    assert_eq!(unreviewed[0]["mean_score"], Value::Null);
    assert_eq!(unreviewed[0]["reviews"], json!([]));

    let r = app
        .get(&s.url(&format!("submissions/{code}/")), &s.c.reviewer)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    for field in ["reviews", "mean_score", "median_score", "review_code"] {
        assert!(
            r.body.get(field).is_none(),
            "{field} shown to a reviewer: {}",
            r.body
        );
    }
    let r = app.get(&s.url("reviews/"), &s.c.read).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 4);
    assert!(results(&r.body).iter().all(|x| x["user"].is_string()));
    let r = app.call(Method::GET, &s.url("reviews/"), None, None).await;
    assert_eq!(r.status, 401, "anonymous: {}", r.body);
    let r = review(&app, &s, &s.c.read, &quiet, &[]).await;
    assert_eq!(r.status, 403, "a read token: {}", r.body);
    let r = review(&app, &s, &s.c.write, &quiet, &[]).await;
    assert_eq!(
        r.status, 403,
        "an organiser who does not review: {}",
        r.body
    );
}

#[tokio::test]
async fn nobody_reviews_or_reads_the_reviews_of_their_own_submission() {
    let app = TestApp::spawn().await;
    let s = setup(&app).await;
    let own = submit(&app, &s, "Mine", s.track, "reviewer@example.org").await;
    let orga_own = submit(&app, &s, "The organiser's", s.track, "orga@example.org").await;
    for (email, user) in [
        ("reviewer@example.org", s.reviewer_user),
        ("orga@example.org", s.c.orga_user),
    ] {
        sql(
            &app,
            "UPDATE talk_speakers SET user_id = $1 WHERE email = $2",
            vec![user.into(), email.into()],
        )
        .await;
    }
    let r = review(&app, &s, &s.c.reviewer, &own, &[]).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body["submission"].is_array(), "{}", r.body);
    let (other, _) = reviewer(&app, &s, "other@example.org", &[]).await;
    let theirs = reviewed(&app, &s, &other, &own, &[]).await;
    reviewed(&app, &s, &other, &orga_own, &[]).await;
    phase(&app, &s, json!({"can_see_other_reviews": "always"})).await;
    let r = app
        .get(&s.url(&format!("reviews/{theirs}/")), &s.c.reviewer)
        .await;
    assert_eq!(
        r.status, 404,
        "a review of one's own submission: {}",
        r.body
    );
    let r = app.get(&s.url("reviews/"), &s.c.reviewer).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 1, "{}", r.body);
    let r = app.get(&s.url("reviews/"), &s.c.read).await;
    assert_eq!(
        r.body["count"], 1,
        "the organiser's own submission is left out: {}",
        r.body
    );
    assert_eq!(results(&r.body)[0]["submission"], own.as_str());
}

#[tokio::test]
async fn reviewers_limited_to_tracks_review_and_see_only_those() {
    let app = TestApp::spawn().await;
    let s = setup(&app).await;
    let rust = submit(&app, &s, "Traits", s.track, "a@example.org").await;
    let go = submit(&app, &s, "Goroutines", s.other_track, "b@example.org").await;
    let (limited, _) = reviewer(&app, &s, "limited@example.org", &[s.track]).await;
    let r = review(&app, &s, &limited, &go, &[]).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body["submission"].is_array(), "{}", r.body);
    reviewed(&app, &s, &limited, &rust, &[]).await;
    let elsewhere = reviewed(&app, &s, &s.c.reviewer, &go, &[]).await;
    phase(&app, &s, json!({"can_see_other_reviews": "always"})).await;
    let r = app.get(&s.url("reviews/"), &limited).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 1, "{}", r.body);
    assert_eq!(results(&r.body)[0]["submission"], rust.as_str());
    let r = app
        .get(&s.url(&format!("reviews/{elsewhere}/")), &limited)
        .await;
    assert_eq!(r.status, 404, "{}", r.body);
    let r = app.get(&s.url("reviews/"), &s.c.reviewer).await;
    assert_eq!(r.body["count"], 2, "{}", r.body);
}

#[tokio::test]
async fn the_active_phase_decides_who_reviews_and_who_sees_other_reviews() {
    let app = TestApp::spawn().await;
    let s = setup(&app).await;
    let code = submit(&app, &s, "Macros", s.track, "a@example.org").await;
    let later = submit(&app, &s, "Async", s.track, "b@example.org").await;
    let (other, _) = reviewer(&app, &s, "other@example.org", &[]).await;
    let theirs = reviewed(&app, &s, &other, &code, &[]).await;
    // Without phases: pretalx's default, other reviews after one's own.
    let r = app.get(&s.url("reviews/"), &s.c.reviewer).await;
    assert_eq!(r.status, 403, "no list before 'always': {}", r.body);
    let r = app
        .get(&s.url(&format!("reviews/{theirs}/")), &s.c.reviewer)
        .await;
    assert_eq!(r.status, 403, "not reviewed yet: {}", r.body);
    let mine = reviewed(&app, &s, &s.c.reviewer, &code, &[]).await;
    let r = app
        .get(&s.url(&format!("reviews/{theirs}/")), &s.c.reviewer)
        .await;
    assert_eq!(r.status, 200, "after one's own review: {}", r.body);
    let r = app
        .patch(
            &s.url(&format!("reviews/{theirs}/")),
            &s.c.reviewer,
            json!({"text": "Mine now"}),
        )
        .await;
    assert_eq!(r.status, 403, "another's review: {}", r.body);
    let r = app
        .delete(&s.url(&format!("reviews/{theirs}/")), &s.c.reviewer)
        .await;
    assert_eq!(r.status, 403, "{}", r.body);

    let never = phase(
        &app,
        &s,
        json!({"name": "Blind", "can_see_other_reviews": "never"}),
    )
    .await;
    let r = app
        .get(&s.url(&format!("reviews/{theirs}/")), &s.c.reviewer)
        .await;
    assert_eq!(r.status, 403, "never: {}", r.body);
    let r = app
        .get(&s.url(&format!("reviews/{mine}/")), &s.c.reviewer)
        .await;
    assert_eq!(r.status, 200, "one's own: {}", r.body);

    let closed = phase(
        &app,
        &s,
        json!({"name": "Selection", "can_review": false, "can_see_other_reviews": "always"}),
    )
    .await;
    let r = app.get(&s.url("review-phases/?o=id"), &s.c.reviewer).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let active: Vec<i64> = results(&r.body)
        .iter()
        .filter(|p| p["is_active"] == true)
        .map(id_of)
        .collect();
    assert_eq!(active, [closed], "one active phase: {}", r.body);
    assert!(ids(&r).contains(&never));
    let r = review(&app, &s, &s.c.reviewer, &later, &[]).await;
    assert_eq!(r.status, 403, "reviewing closed: {}", r.body);
    let r = app
        .patch(
            &s.url(&format!("reviews/{mine}/")),
            &s.c.reviewer,
            json!({"text": "Late"}),
        )
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
    let r = app.get(&s.url("reviews/"), &s.c.reviewer).await;
    assert_eq!(r.status, 200, "always: {}", r.body);
    assert_eq!(r.body["count"], 2);

    let r = app
        .patch(
            &s.url(&format!("review-phases/{closed}/")),
            &s.c.write,
            json!({"can_review": true}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = app
        .post(
            &s.url(&format!("submissions/{later}/accept/")),
            &s.c.write,
            json!({}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = review(&app, &s, &s.c.reviewer, &later, &[]).await;
    assert_eq!(r.status, 400, "an accepted submission: {}", r.body);
    let r = app
        .post(
            &s.url(&format!("submissions/{code}/reject/")),
            &s.c.write,
            json!({}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = app
        .patch(
            &s.url(&format!("reviews/{mine}/")),
            &s.c.reviewer,
            json!({"text": "After"}),
        )
        .await;
    assert_eq!(r.status, 403, "a rejected submission's review: {}", r.body);

    // Phases exist, none is active: nobody reviews, and those who only review are shut out.
    let r = app
        .patch(
            &s.url(&format!("review-phases/{closed}/")),
            &s.c.write,
            json!({"is_active": false}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = app.get(&s.url("tags/"), &s.c.reviewer).await;
    assert_eq!(r.status, 403, "{}", r.body);
}

#[tokio::test]
async fn an_anonymised_phase_closes_the_talk_api_to_those_who_only_review() {
    let app = TestApp::spawn().await;
    let s = setup(&app).await;
    let code = submit(&app, &s, "Unsafe", s.track, "a@example.org").await;
    reviewed(&app, &s, &s.c.reviewer, &code, &[]).await;
    let anonymous = phase(
        &app,
        &s,
        json!({"can_see_speaker_names": false, "can_see_other_reviews": "always"}),
    )
    .await;
    for path in [
        "reviews/",
        "submissions/",
        "speakers/",
        "tags/",
        "score-categories/",
        "",
    ] {
        let r = app.get(&s.url(path), &s.c.reviewer).await;
        assert_eq!(r.status, 403, "{path}: {}", r.body);
        assert!(!r.body.to_string().contains("Speaker a@example.org"));
    }
    let r = review(&app, &s, &s.c.reviewer, &code, &[]).await;
    assert_eq!(r.status, 403, "{}", r.body);
    // Organisers, also those who review, still see everything.
    let (both, _) = talk_user(
        &app,
        "both@example.org",
        s.c.organizer,
        &[Permission::Review, Permission::ChangeSubmissions],
    )
    .await;
    let both = user_token(&app, both, &Endpoints::all_read(), None).await;
    for token in [&s.c.read, &both] {
        let r = app
            .get(
                &s.url(&format!("submissions/{code}/?expand=speakers")),
                token,
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.body["speakers"][0]["name"], "Speaker a@example.org");
    }
    let r = app
        .patch(
            &s.url(&format!("review-phases/{anonymous}/")),
            &s.c.write,
            json!({"can_see_speaker_names": true}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = app.get(&s.url("reviews/"), &s.c.reviewer).await;
    assert_eq!(r.status, 200, "names shown again: {}", r.body);
}

#[tokio::test]
async fn reviewers_names_are_shown_as_the_phase_says() {
    let app = TestApp::spawn().await;
    let s = setup(&app).await;
    let code = submit(&app, &s, "Generics", s.track, "a@example.org").await;
    let (other, other_user) = reviewer(&app, &s, "secret@example.org", &[]).await;
    reviewed(&app, &s, &other, &code, &[]).await;
    let mine = reviewed(&app, &s, &s.c.reviewer, &code, &[]).await;
    let other_code = user_code(&app, other_user).await;
    let own_code = user_code(&app, s.reviewer_user).await;
    let hidden = phase(
        &app,
        &s,
        json!({"can_see_reviewer_names": false, "can_see_other_reviews": "always"}),
    )
    .await;

    let r = app.get(&s.url("reviews/?expand=user"), &s.c.reviewer).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 2);
    assert!(
        results(&r.body).iter().all(|x| x.get("user").is_none()),
        "{}",
        r.body
    );
    assert!(!r.body.to_string().contains("secret@example.org"));
    let r = app
        .get(
            &s.url(&format!("reviews/?user={other_code}")),
            &s.c.reviewer,
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(!r.body.to_string().contains(&other_code));
    let r = app
        .get(&s.url(&format!("reviews/?user={own_code}")), &s.c.reviewer)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(ids(&r), [mine]);
    let r = app.get(&s.url("reviews/?q=secret"), &s.c.reviewer).await;
    assert_eq!(r.body["count"], 0, "no search by hidden names: {}", r.body);

    let r = app
        .get(&s.url("reviews/?expand=user&q=secret"), &s.c.read)
        .await;
    assert_eq!(r.body["count"], 1, "{}", r.body);
    assert_eq!(results(&r.body)[0]["user"]["email"], "secret@example.org");
    assert_eq!(results(&r.body)[0]["user"]["code"], other_code.as_str());

    let r = app
        .patch(
            &s.url(&format!("review-phases/{hidden}/")),
            &s.c.write,
            json!({"can_see_reviewer_names": true}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = app
        .get(
            &s.url(&format!("reviews/?user={other_code}&expand=user")),
            &s.c.reviewer,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        results(&r.body)[0]["user"]["name"],
        "User secret@example.org"
    );
}

#[tokio::test]
async fn a_token_for_reviews_alone_writes_and_reads_reviews_with_their_answers() {
    let app = TestApp::spawn().await;
    let s = setup(&app).await;
    let code = submit(&app, &s, "Generics", s.track, "a@example.org").await;
    let all = [
        Action::List,
        Action::Retrieve,
        Action::Create,
        Action::Update,
        Action::Destroy,
    ];
    let reviews_only = Endpoints([("reviews".to_owned(), all.to_vec())].into_iter().collect());
    let token = user_token(&app, s.reviewer_user, &reviews_only, None).await;
    let r = review(&app, &s, &token, &code, &[s.values[2]]).await;
    assert_eq!(r.status, 201, "answers are part of a review: {}", r.body);
    assert_eq!(r.body["answers"], json!([]));
    let id = id_of(&r.body);
    let one = s.url(&format!("reviews/{id}/"));
    let r = app.get(&one, &token).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["scores"][0]["value"], "2.00", "{}", r.body);
    let r = app.get(&format!("{one}?expand=submission"), &token).await;
    assert_eq!(r.status, 403, "sessions are another endpoint: {}", r.body);
}

#[tokio::test]
async fn a_reviews_log_names_its_author_only_where_the_review_does() {
    let app = TestApp::spawn().await;
    let s = setup(&app).await;
    let code = submit(&app, &s, "Generics", s.track, "a@example.org").await;
    let (other, other_user) = reviewer(&app, &s, "secret@example.org", &[]).await;
    let theirs = reviewed(&app, &s, &other, &code, &[]).await;
    let mine = reviewed(&app, &s, &s.c.reviewer, &code, &[]).await;
    let other_code = user_code(&app, other_user).await;
    let own_code = user_code(&app, s.reviewer_user).await;
    phase(
        &app,
        &s,
        json!({"can_see_reviewer_names": false, "can_see_other_reviews": "always"}),
    )
    .await;
    let log_of = |id: i64| s.url(&format!("reviews/{id}/log/"));

    let r = app.get(&log_of(theirs), &s.c.reviewer).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 1, "{}", r.body);
    assert_eq!(results(&r.body)[0]["person"], Value::Null, "{}", r.body);
    assert!(!r.body.to_string().contains(&other_code), "{}", r.body);
    assert!(
        !r.body.to_string().contains("secret@example.org"),
        "{}",
        r.body
    );
    let r = app.get(&log_of(mine), &s.c.reviewer).await;
    assert_eq!(
        results(&r.body)[0]["person"]["code"],
        own_code.as_str(),
        "{}",
        r.body
    );
    let r = app.get(&log_of(theirs), &s.c.read).await;
    assert_eq!(
        results(&r.body)[0]["person"]["code"],
        other_code.as_str(),
        "organisers see names"
    );
}

#[tokio::test]
async fn reviews_filter_search_and_order_as_pretalx() {
    let app = TestApp::spawn().await;
    let s = setup(&app).await;
    let a = submit(&app, &s, "Alpha talk", s.track, "a@example.org").await;
    let b = submit(&app, &s, "Beta talk", s.other_track, "b@example.org").await;
    let ra = reviewed(&app, &s, &s.c.reviewer, &a, &[]).await;
    let rb = reviewed(&app, &s, &s.c.reviewer, &b, &[]).await;
    let (second, second_user) = reviewer(&app, &s, "second@example.org", &[]).await;
    let ra2 = reviewed(&app, &s, &second, &a, &[]).await;
    let r = app
        .post(
            &s.url(&format!("submissions/{b}/accept/")),
            &s.c.write,
            json!({}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let second_code = user_code(&app, second_user).await;
    let speaker = rows(
        &app,
        "SELECT code FROM talk_speakers WHERE email = $1",
        vec!["b@example.org".into()],
    )
    .await;
    let speaker: String = speaker[0].try_get("", "code").expect("a code");
    let cases: Vec<(String, Vec<i64>)> = vec![
        (format!("submission={}", a.to_lowercase()), vec![ra, ra2]),
        (format!("user={second_code}"), vec![ra2]),
        (format!("speaker={speaker}"), vec![rb]),
        ("submission__state=accepted".into(), vec![rb]),
        (
            "submission__state=submitted&submission__state=accepted".into(),
            vec![ra, rb, ra2],
        ),
        (format!("submission__track={}", s.other_track), vec![rb]),
        (
            format!("submission__submission_type={}", s.kind),
            vec![ra, rb, ra2],
        ),
        ("submission__content_locale=de".into(), vec![]),
        ("q=BETA".into(), vec![rb]),
        ("q=second".into(), vec![ra2]),
        ("o=-id".into(), vec![ra2, rb, ra]),
    ];
    for (query, expected) in cases {
        let r = app
            .get(&s.url(&format!("reviews/?{query}")), &s.c.read)
            .await;
        assert_eq!(r.status, 200, "{query}: {}", r.body);
        assert_eq!(ids(&r), expected, "{query}");
    }
    let r = app
        .get(&s.url("reviews/?submission__state=maybe"), &s.c.read)
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let r = app.get(&s.url("reviews/?expand=nothing"), &s.c.read).await;
    assert_eq!(r.status, 400, "{}", r.body);
}

#[tokio::test]
async fn an_expanded_list_costs_the_same_queries_for_one_or_three_reviews() {
    let app = TestApp::spawn().await;
    let s = setup(&app).await;
    let tag = id_of(&create(&app, &s.c, "tags", json!({"tag": "hot"})).await);
    let question = id_of(
        &create(
            &app,
            &s.c,
            "questions",
            json!({"question": {"en": "Confident?"}, "variant": "string", "target": "reviewer"}),
        )
        .await,
    );
    let url = s.url(
        "reviews/?expand=user,scores.category,submission.speakers,submission.track,\
         submission.submission_type,submission.tags,answers.question",
    );
    let add = |n: usize| {
        let (app, s) = (&app, &s);
        async move {
            let code = submit(
                app,
                s,
                &format!("Talk {n}"),
                s.track,
                &format!("s{n}@example.org"),
            )
            .await;
            let r = app
                .patch(
                    &s.url(&format!("submissions/{code}/")),
                    &s.c.write,
                    json!({"tags": [tag]}),
                )
                .await;
            assert_eq!(r.status, 200, "{}", r.body);
            let id = reviewed(app, s, &s.c.reviewer, &code, &[s.values[n % 3]]).await;
            sql(
                app,
                "INSERT INTO talk_answers (question_id, review_id, answer) VALUES ($1, $2, $3)",
                vec![question.into(), id.into(), format!("Answer {n}").into()],
            )
            .await;
        }
    };
    add(1).await;
    app.get(&url, &s.c.read).await;
    let (r, one) = tessera::db::count_queries(app.get(&url, &s.c.read)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 1, "{}", r.body);
    add(2).await;
    add(3).await;
    let (r, three) = tessera::db::count_queries(app.get(&url, &s.c.read)).await;
    assert_eq!(r.body["count"], 3, "{}", r.body);
    for x in results(&r.body) {
        assert_eq!(x["user"]["email"], "reviewer@example.org", "{x}");
        assert_eq!(x["scores"][0]["category"]["name"]["en"], "Impact", "{x}");
        assert_eq!(x["submission"]["track"]["id"], s.track, "{x}");
        assert_eq!(
            x["submission"]["submission_type"]["name"]["en"], "Talk",
            "{x}"
        );
        assert_eq!(x["submission"]["tags"][0]["tag"], "hot", "{x}");
        assert!(x["submission"]["speakers"][0]["name"].is_string(), "{x}");
        assert_eq!(x["answers"][0]["question"]["id"], question, "{x}");
        assert!(
            x["answers"][0]["answer"]
                .as_str()
                .is_some_and(|a| a.starts_with("Answer"))
        );
    }
    assert_eq!(
        one, three,
        "queries for one review: {one}, for three: {three}"
    );
    let id = ids(&r)[0];
    let r = app
        .get(
            &s.url(&format!("reviews/{id}/?expand=submission,scores.category")),
            &s.c.reviewer,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.body["submission"]["code"].is_string(), "{}", r.body);
    assert!(
        r.body["submission"].get("mean_score").is_none(),
        "reviewers see no scores of submissions"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_reviews_of_one_submission_by_one_reviewer_at_once_give_one_201_and_one_400() {
    let app = Arc::new(TestApp::spawn().await);
    let s = setup(&app).await;
    for round in 0..3 {
        let code = submit(
            &app,
            &s,
            &format!("Raced {round}"),
            s.track,
            "r@example.org",
        )
        .await;
        let tasks: Vec<_> = (0..2)
            .map(|_| {
                let (app, url, token) = (app.clone(), s.url("reviews/"), s.c.reviewer.clone());
                let body = json!({"submission": code, "text": "At once"});
                tokio::spawn(async move { app.post(&url, &token, body).await })
            })
            .collect();
        let mut statuses = Vec::new();
        for t in tasks {
            let r = t.await.expect("a task");
            if r.status == 400 {
                assert_eq!(
                    r.body["submission"][0],
                    "You have already reviewed this submission."
                );
            }
            statuses.push(r.status);
        }
        statuses.sort_unstable();
        assert_eq!(statuses, [201, 400], "round {round}");
    }
    let n = rows(&app, "SELECT COUNT(*) AS n FROM talk_reviews", vec![]).await;
    assert_eq!(n[0].try_get::<i64>("", "n").expect("a count"), 3);
}

#[tokio::test]
async fn organisers_of_the_settings_configure_score_categories_and_review_phases() {
    let app = TestApp::spawn().await;
    let s = setup(&app).await;
    let categories = s.url("score-categories/");
    let r = app.get(&categories, &s.c.reviewer).await;
    assert_eq!(
        r.status, 200,
        "reviewers read the values they give: {}",
        r.body
    );
    assert_eq!(r.body["count"], 1);
    let r = app
        .post(&categories, &s.c.reviewer, json!({"name": "Mine"}))
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
    let (cfp_only, _) = talk_user(
        &app,
        "cfp@example.org",
        s.c.organizer,
        &[Permission::ChangeSubmissions],
    )
    .await;
    let cfp_only = user_token(&app, cfp_only, &Endpoints::all_write(), None).await;
    let r = app
        .post(&categories, &cfp_only, json!({"name": "Mine"}))
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
    let r = app.call(Method::GET, &categories, None, None).await;
    assert_eq!(r.status, 401, "{}", r.body);
    for (body, field) in [
        (json!({"name": "W", "weight": "1.25"}), "weight"),
        (json!({"name": "W", "weight": "1000"}), "weight"),
        (
            json!({"name": "W", "limit_tracks": [999_999]}),
            "limit_tracks",
        ),
        (
            json!({"name": "W", "scores": [{"value": "1"}, {"value": "1.00"}]}),
            "scores",
        ),
        (
            json!({"name": "W", "scores": [{"id": s.values[0], "value": "1"}]}),
            "scores",
        ),
        (json!({"name": {"en": " "}}), "name"),
    ] {
        let r = app.post(&categories, &s.c.write, body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        assert!(r.body[field].is_array(), "{body}: {}", r.body);
    }
    // A category of one track applies to that track's submissions only.
    let limited = create(
        &app,
        &s.c,
        "score-categories",
        json!({"name": "Go only", "limit_tracks": [s.other_track], "scores": [{"value": "5"}]}),
    )
    .await;
    assert_eq!(limited["limit_tracks"], json!([s.other_track]));
    let five = id_of(&limited["scores"][0]);
    let rust = submit(&app, &s, "Rusty", s.track, "a@example.org").await;
    let r = review(&app, &s, &s.c.reviewer, &rust, &[five]).await;
    assert_eq!(r.status, 400, "{}", r.body);
    let go = submit(&app, &s, "Gopher", s.other_track, "b@example.org").await;
    let on_go = reviewed(&app, &s, &s.c.reviewer, &go, &[five, s.values[1]]).await;
    let one = format!("reviews/{on_go}/");
    assert_eq!(app.get(&s.url(&one), &s.c.read).await.body["score"], "7.00");
    // Moving the submission to another track drops the category from its score.
    let r = app
        .patch(
            &s.url(&format!("submissions/{go}/")),
            &s.c.write,
            json!({"track": s.track}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(app.get(&s.url(&one), &s.c.read).await.body["score"], "2.00");
    // Values left out of a change are removed, from reviews too.
    let r = app
        .put(
            &s.url(&format!("score-categories/{}/", s.category)),
            &s.c.write,
            json!({"name": {"en": "Impact", "de": "Wirkung"}, "scores": [{"id": s.values[2], "value": "4", "label": "Great"}]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.body["scores"],
        json!([{"id": s.values[2], "value": "4.00", "label": "Great"}])
    );
    assert_eq!(r.body["weight"], "2.0", "PUT keeps what it leaves out");
    let r = app.get(&s.url(&one), &s.c.read).await;
    assert_eq!(r.body["score"], Value::Null, "{}", r.body);
    assert_eq!(r.body["scores"].as_array().map(Vec::len), Some(1));
    let log = app
        .get(
            &s.url(&format!("score-categories/{}/log/", s.category)),
            &s.c.read,
        )
        .await;
    assert_eq!(log.body["count"], 2, "{}", log.body);
    let r = app
        .get(
            &s.url("score-categories/?expand=limit_tracks&lang=en&active=true"),
            &s.c.read,
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["count"], 2);
    assert_eq!(results(&r.body)[1]["limit_tracks"][0]["id"], s.other_track);
    // Independent categories do not count, and one that counts stays.
    let r = app
        .patch(
            &s.url(&format!("score-categories/{}/", id_of(&limited))),
            &s.c.write,
            json!({"is_independent": true}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["weight"], "0.0");
    let r = app
        .patch(
            &s.url(&format!("score-categories/{}/", s.category)),
            &s.c.write,
            json!({"is_independent": true}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let r = app
        .delete(
            &s.url(&format!("score-categories/{}/", s.category)),
            &s.c.write,
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body["detail"].is_string(), "{}", r.body);
    let r = app
        .delete(
            &s.url(&format!("score-categories/{}/", id_of(&limited))),
            &s.c.write,
        )
        .await;
    assert_eq!(r.status, 204, "{}", r.body);

    let phases = s.url("review-phases/");
    let r = app
        .post(
            &phases,
            &s.c.write,
            json!({"name": "Odd", "start": "2026-05-02T00:00:00Z", "end": "2026-05-01T00:00:00Z"}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body["end"].is_array());
    let r = app
        .post(
            &phases,
            &s.c.write,
            json!({"name": "Odd", "can_see_other_reviews": "sometimes"}),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let r = app
        .post(&phases, &s.c.reviewer, json!({"name": "Mine"}))
        .await;
    assert_eq!(r.status, 403, "{}", r.body);
    let r = app
        .post(&phases, &s.c.write, json!({"name": "Review", "start": "2026-05-01T00:00:00Z", "end": "2026-06-01T00:00:00Z"}))
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.body["is_active"], false);
    assert_eq!(r.body["can_review"], true);
    assert_eq!(r.body["can_see_other_reviews"], "after_review");
    let id = id_of(&r.body);
    let r = app
        .patch(
            &s.url(&format!("review-phases/{id}/")),
            &s.c.write,
            json!({"end": null}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["end"], Value::Null);
    let r = app
        .get(&s.url(&format!("review-phases/{id}/log/")), &s.c.read)
        .await;
    assert_eq!(r.body["count"], 2, "{}", r.body);
    let r = app
        .delete(&s.url(&format!("review-phases/{id}/")), &s.c.write)
        .await;
    assert_eq!(r.status, 204, "{}", r.body);
}
