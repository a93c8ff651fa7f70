//! The exports of released schedules: frab JSON, frab XML and iCalendar, public at
//! `/{event}/schedule/export/<file>` once the event is public and has released a schedule,
//! and for organisers under `schedules/{id}/exporters/{name}/`; valid against the published
//! frab schemas; kept once made, and a new release served from the next request on, by
//! every server on the database.

use std::path::Path;
use std::time::Duration;

use poem::http::Method;
use serde_json::{Value, json};
use tessera::domain::talk::endpoints::{Action, Endpoints};
use tessera_tests::process::installed_tool;
use tessera_tests::talk::{Conference, conference, create, results, sql, user_token};
use tessera_tests::{Reply, TestApp};

/// A conference on 1 and 2 June 2030 in Berlin, with a 30-minute session type, a track and
/// two rooms (German names too).
struct Program {
    c: Conference,
    kind: i64,
    track: i64,
    rooms: [i64; 2],
}

impl Program {
    fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.c.base)
    }
}

const JSON: &str = "/conf2026/schedule/export/schedule.json";
const XML: &str = "/conf2026/schedule/export/schedule.xml";
const ICS: &str = "/conf2026/schedule/export/schedule.ics";

async fn program(app: &TestApp) -> Program {
    let c = conference(app).await;
    sql(
        app,
        "UPDATE events SET date_from = $1, date_to = $2, timezone = $3 WHERE id = $4",
        vec![
            at("2030-06-01T08:00:00Z").into(),
            at("2030-06-02T18:00:00Z").into(),
            "Europe/Berlin".into(),
            c.event.into(),
        ],
    )
    .await;
    let r = app
        .patch(
            "/api/v1/organizers/conf/events/conf2026/settings/",
            &app.admin_token("conf").await,
            json!({"locales": ["en", "de"], "locale": "en"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let kind = create(
        app,
        &c,
        "submission-types",
        json!({"name": {"en": "Talk", "de": "Vortrag"}, "default_duration": 30}),
    )
    .await["id"]
        .as_i64()
        .expect("an ID");
    let track = create(
        app,
        &c,
        "tracks",
        json!({"name": {"en": "Systems"}, "color": "#1F6FEB"}),
    )
    .await["id"]
        .as_i64()
        .expect("an ID");
    let hall = create(
        app,
        &c,
        "rooms",
        json!({"name": {"en": "Hall", "de": "Saal"}, "position": 1, "capacity": 300}),
    )
    .await["id"]
        .as_i64()
        .expect("an ID");
    let annex = create(app, &c, "rooms", json!({"name": "Annex", "position": 2})).await["id"]
        .as_i64()
        .expect("an ID");
    Program {
        c,
        kind,
        track,
        rooms: [hall, annex],
    }
}

fn at(text: &str) -> chrono::DateTime<chrono::Utc> {
    text.parse().expect("a time")
}

/// A session with one speaker, moved through `moves` (e.g. `["accept", "confirm"]`) and
/// placed in `room` at `start`; gives its code.
async fn session(
    app: &TestApp,
    p: &Program,
    title: &str,
    moves: &[&str],
    room: i64,
    start: &str,
) -> String {
    let s = create(
        app,
        &p.c,
        "submissions",
        json!({"title": title, "submission_type": p.kind, "track": p.track,
               "abstract": format!("About {title}.")}),
    )
    .await;
    let code = s["code"].as_str().expect("a code").to_owned();
    let one = p.url(&format!("submissions/{code}/"));
    let local: String = title.chars().filter(char::is_ascii_alphanumeric).collect();
    let local = if local.is_empty() {
        code.to_lowercase()
    } else {
        local
    };
    let r = app
        .post(
            &format!("{one}add-speaker/"),
            &p.c.write,
            json!({"email": format!("{}@example.org", local.to_lowercase()),
                   "name": format!("Speaker of {title}")}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    for m in moves {
        let r = app.post(&format!("{one}{m}/"), &p.c.write, json!({})).await;
        assert_eq!(r.status, 200, "{m}: {}", r.body);
    }
    let r = app
        .get(&p.url("schedules/wip/?expand=slots"), &p.c.write)
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let slot = r.body["slots"]
        .as_array()
        .expect("slots")
        .iter()
        .find(|s| s["submission"] == code)
        .and_then(|s| s["id"].as_i64())
        .expect("a slot of the session");
    let r = app
        .patch(
            &p.url(&format!("slots/{slot}/")),
            &p.c.write,
            json!({"room": room, "start": start}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    code
}

async fn release(app: &TestApp, p: &Program, version: &str) -> i64 {
    let r = app
        .post(
            &p.url("schedules/release/"),
            &p.c.write,
            json!({"version": version}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    r.body["id"].as_i64().expect("an ID")
}

async fn anonymous(app: &TestApp, path: &str) -> Reply {
    app.call(Method::GET, path, None, None).await
}

/// A body as text (JSON answers are parsed by the test client).
fn text(r: &Reply) -> String {
    match &r.body {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Two confirmed sessions (one late at night, so on the first day) and an accepted one,
/// released as `v1`; gives the codes of the confirmed ones.
async fn released(app: &TestApp, p: &Program) -> (String, String) {
    let first = session(
        app,
        p,
        "Rust & <XML>",
        &["accept", "confirm"],
        p.rooms[0],
        "2030-06-01T08:00:00Z",
    )
    .await;
    let late = session(
        app,
        p,
        "Late night",
        &["accept", "confirm"],
        p.rooms[1],
        "2030-06-02T00:30:00Z",
    )
    .await;
    session(
        app,
        p,
        "Unconfirmed",
        &["accept"],
        p.rooms[0],
        "2030-06-02T09:00:00Z",
    )
    .await;
    release(app, p, "v1").await;
    (first, late)
}

#[tokio::test]
async fn the_public_exports_are_404_until_the_event_is_public_with_a_released_schedule() {
    let app = TestApp::spawn().await;
    let p = program(&app).await;
    session(
        &app,
        &p,
        "Opening",
        &["accept", "confirm"],
        p.rooms[0],
        "2030-06-01T08:00:00Z",
    )
    .await;
    for path in [JSON, XML, ICS, "/conf2026/schedule.json"] {
        let r = anonymous(&app, path).await;
        assert_eq!(r.status, 404, "{path} before a release: {}", r.body);
    }
    release(&app, &p, "v1").await;
    for path in [
        JSON,
        XML,
        ICS,
        "/conf2026/schedule.json",
        "/conf2026/schedule.xml",
        "/conf2026/schedule.ics",
    ] {
        let r = anonymous(&app, path).await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
    }
    for path in [
        "/conf2026/schedule/export/faved.ics",
        "/conf2026/schedule/export/nothing",
        "/elsewhere/schedule/export/schedule.json",
        "/conf2026/schedule.pdf",
    ] {
        let r = anonymous(&app, path).await;
        assert_eq!(r.status, 404, "{path}: {}", r.body);
    }
    sql(
        &app,
        "UPDATE events SET is_public = $1 WHERE id = $2",
        vec![false.into(), p.c.event.into()],
    )
    .await;
    for path in [JSON, XML, ICS] {
        let r = anonymous(&app, path).await;
        assert_eq!(r.status, 404, "{path} of a private event: {}", r.body);
        assert_eq!(r.body["detail"], "Not found.");
    }
}

#[tokio::test]
async fn the_exports_have_pretalx_content_types_an_entity_tag_and_any_origin() {
    let app = TestApp::spawn().await;
    let p = program(&app).await;
    released(&app, &p).await;
    for (path, content_type, attachment) in [
        (JSON, "application/json", false),
        (XML, "text/xml", false),
        (ICS, "text/calendar", true),
    ] {
        let r = anonymous(&app, path).await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        assert_eq!(r.header("content-type"), Some(content_type), "{path}");
        assert_eq!(r.header("access-control-allow-origin"), Some("*"), "{path}");
        let disposition = r.header("content-disposition").unwrap_or_default();
        assert_eq!(
            disposition.starts_with("attachment; filename=\"conf2026-schedule-"),
            attachment,
            "{path}: {disposition}"
        );
        let etag = r.header("etag").expect("an entity tag").to_owned();
        assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");
        for sent in [etag.clone(), etag.trim_matches('"').to_owned()] {
            let again = app
                .raw(Method::GET, path, &[("If-None-Match", &sent)], Vec::new())
                .await;
            assert_eq!(again.status, 304, "{path} with {sent}");
            assert_eq!(again.body, Value::Null);
            assert_eq!(again.header("etag"), Some(etag.as_str()));
        }
        let stale = app
            .raw(
                Method::GET,
                path,
                &[("If-None-Match", "\"old\"")],
                Vec::new(),
            )
            .await;
        assert_eq!(stale.status, 200, "{path}");
    }
    let short = anonymous(&app, "/conf2026/schedule.xml").await;
    assert_eq!(text(&short), text(&anonymous(&app, XML).await));
}

#[tokio::test]
async fn clients_that_accept_gzip_get_the_exports_compressed() {
    use std::io::Read;
    let app = TestApp::spawn().await;
    let p = program(&app).await;
    released(&app, &p).await;
    let base = app.serve().await;
    let client = reqwest::Client::new();
    let get = |encoding: &'static str, etag: Option<String>| {
        let mut request = client
            .get(format!("{base}{JSON}"))
            .header("Accept-Encoding", encoding);
        if let Some(tag) = etag {
            request = request.header("If-None-Match", tag);
        }
        request.send()
    };
    let r = get("gzip, deflate", None).await.expect("an answer");
    assert_eq!(r.status(), 200);
    let header = |r: &reqwest::Response, name: &str| {
        r.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    assert_eq!(header(&r, "content-encoding").as_deref(), Some("gzip"));
    assert_eq!(header(&r, "vary").as_deref(), Some("Accept-Encoding"));
    let etag = header(&r, "etag").expect("an entity tag");
    let compressed = r.bytes().await.expect("a body");
    let mut plain = String::new();
    flate2::read::GzDecoder::new(&compressed[..])
        .read_to_string(&mut plain)
        .expect("gzip");
    let parsed: Value = serde_json::from_str(&plain).expect("JSON");
    let unpacked = anonymous(&app, JSON).await;
    assert_eq!(parsed, unpacked.body);
    assert!(compressed.len() < plain.len());
    assert_ne!(unpacked.header("etag"), Some(etag.as_str()));
    assert_eq!(unpacked.header("content-encoding"), None);
    let r = get("gzip", Some(etag.clone())).await.expect("an answer");
    assert_eq!(r.status(), 304);
    let r = get("gzip;q=0, identity", Some(etag))
        .await
        .expect("an answer");
    assert_eq!(r.status(), 200, "the plain file has another tag");
    assert_eq!(header(&r, "content-encoding"), None);
}

#[tokio::test]
async fn the_frab_json_lists_days_rooms_and_the_public_sessions_with_their_speakers() {
    let app = TestApp::spawn().await;
    let p = program(&app).await;
    let (first, late) = released(&app, &p).await;
    let r = anonymous(&app, JSON).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let doc = &r.body;
    assert_eq!(doc["$schema"], "https://c3voc.de/schedule/schema.json");
    assert_eq!(doc["generator"]["name"], "tessera");
    let schedule = &doc["schedule"];
    assert_eq!(schedule["version"], "v1");
    assert_eq!(schedule["base_url"], "http://tessera.test");
    let conf = &schedule["conference"];
    assert_eq!(conf["acronym"], "conf2026");
    assert_eq!(conf["start"], "2030-06-01");
    assert_eq!(conf["end"], "2030-06-02");
    assert_eq!(conf["daysCount"], 2);
    assert_eq!(conf["time_zone_name"], "Europe/Berlin");
    assert_eq!(conf["timeslot_duration"], "00:05");
    let rooms: Vec<&Value> = conf["rooms"].as_array().expect("rooms").iter().collect();
    assert_eq!(rooms.len(), 2, "{rooms:?}");
    assert_eq!(rooms[0]["name"], "Hall");
    assert_eq!(rooms[0]["capacity"], 300);
    assert_eq!(conf["tracks"][0]["name"], "Systems");
    assert_eq!(conf["tracks"][0]["color"], "#1f6feb");
    let days = conf["days"].as_array().expect("days");
    assert_eq!(days.len(), 2);
    assert_eq!(days[0]["date"], "2030-06-01");
    assert_eq!(days[0]["day_start"], "2030-06-01T04:00:00+02:00");
    assert_eq!(days[0]["day_end"], "2030-06-02T03:59:00+02:00");
    // 02:30 in Berlin on 2 June belongs to the first day; the accepted session that is not
    // confirmed is not public.
    let hall = days[0]["rooms"]["Hall"].as_array().expect("the hall");
    let annex = days[0]["rooms"]["Annex"].as_array().expect("the annex");
    assert_eq!(hall.len(), 1);
    assert_eq!(annex.len(), 1);
    assert_eq!(days[1]["rooms"], json!({}), "{}", days[1]);
    let talk = &hall[0];
    assert_eq!(talk["code"], first);
    assert_eq!(talk["title"], "Rust & <XML>");
    assert_eq!(talk["date"], "2030-06-01T10:00:00+02:00");
    assert_eq!(talk["start"], "10:00");
    assert_eq!(talk["end"], "2030-06-01T10:30:00+02:00");
    assert_eq!(talk["duration"], "00:30");
    assert_eq!(talk["room"], "Hall");
    assert_eq!(talk["type"], "Talk");
    assert_eq!(talk["track"], "Systems");
    assert_eq!(talk["language"], "en");
    assert_eq!(talk["abstract"], "About Rust & <XML>.");
    let slug = talk["slug"].as_str().expect("a slug");
    assert!(
        slug.starts_with("conf2026-") && slug.ends_with("-rust-xml"),
        "{slug}"
    );
    assert_eq!(
        talk["url"],
        format!("http://tessera.test/api/events/conf2026/submissions/{first}/")
    );
    assert_eq!(talk["persons"][0]["name"], "Speaker of Rust & <XML>");
    assert!(talk["persons"][0]["guid"].is_string());
    assert_eq!(annex[0]["code"], late);
    assert_eq!(annex[0]["start"], "02:30");
    assert!(
        !text(&r).contains("@example.org"),
        "no speaker's email reaches the public"
    );
    assert!(!text(&r).contains("Unconfirmed"));
    // In German where the event offers it; in its default language otherwise.
    let de = anonymous(&app, &format!("{JSON}?lang=de")).await;
    assert_eq!(
        de.body["schedule"]["conference"]["rooms"][0]["name"],
        "Saal"
    );
    let day = &de.body["schedule"]["conference"]["days"][0];
    assert_eq!(day["rooms"]["Saal"][0]["type"], "Vortrag");
    let fr = anonymous(&app, &format!("{JSON}?lang=fr")).await;
    assert_eq!(
        fr.body["schedule"]["conference"]["rooms"][0]["name"],
        "Hall"
    );
}

#[tokio::test]
async fn the_frab_xml_escapes_text_and_groups_sessions_by_day_and_room() {
    let app = TestApp::spawn().await;
    let p = program(&app).await;
    let (first, _) = released(&app, &p).await;
    let xml = text(&anonymous(&app, XML).await);
    assert!(
        xml.starts_with("<?xml version=\"1.0\" encoding=\"utf-8\"?>"),
        "{xml}"
    );
    assert!(xml.contains("<acronym>conf2026</acronym>"), "{xml}");
    assert!(
        xml.contains("<title>Rust &amp; &lt;XML&gt;</title>"),
        "{xml}"
    );
    assert!(!xml.contains("<XML>"), "{xml}");
    assert!(
        xml.contains("<day index=\"1\" date=\"2030-06-01\" start=\"2030-06-01T04:00:00+02:00\""),
        "{xml}"
    );
    assert!(xml.contains(&format!("code=\"{first}\"")), "{xml}");
    assert!(xml.contains("<start>10:00</start>"), "{xml}");
    assert!(xml.contains("<duration>00:30</duration>"), "{xml}");
    assert!(xml.contains("<room name=\"Annex\""), "{xml}");
    assert!(!xml.contains("Unconfirmed"), "{xml}");
}

#[tokio::test]
async fn the_calendar_has_one_event_per_public_session_in_utc_with_folded_lines() {
    let app = TestApp::spawn().await;
    let p = program(&app).await;
    let (first, late) = released(&app, &p).await;
    let ics = text(&anonymous(&app, ICS).await);
    assert!(
        ics.starts_with("BEGIN:VCALENDAR\r\nVERSION:2.0\r\n"),
        "{ics}"
    );
    assert!(ics.contains("\r\nPRODID:-//tessera//tessera.test//conf2026\r\n"));
    assert!(ics.ends_with("END:VCALENDAR\r\n"));
    assert_eq!(ics.matches("BEGIN:VEVENT\r\n").count(), 2, "{ics}");
    assert!(ics.contains(&format!(
        "\r\nUID:tessera-conf2026-{first}@tessera.test\r\n"
    )));
    assert!(ics.contains(&format!("\r\nUID:tessera-conf2026-{late}@tessera.test\r\n")));
    assert!(ics.contains("\r\nDTSTART:20300601T080000Z\r\nDTEND:20300601T083000Z\r\n"));
    assert!(ics.contains("\r\nSUMMARY:Rust & <XML> - Speaker of Rust & <XML>\r\n"));
    for line in ics.split("\r\n") {
        assert!(line.len() <= 75, "an unfolded line: {line}");
    }
}

/// The Python of `.ci/venv-exports`, or `None` (after failing when it is required, or
#[tokio::test]
async fn the_xml_and_json_exports_are_valid_against_the_published_frab_schemas() {
    let Some(python) = installed_tool(
        ".ci/venv-exports/bin/python",
        "TESSERA_EXPORT_SCHEMAS",
        "the schema validators",
    ) else {
        return;
    };
    let app = TestApp::spawn().await;
    let p = program(&app).await;
    released(&app, &p).await;
    // A session whose title has no letters, with a link, and control characters where
    // people paste them; a version name with markup.
    let code = session(
        &app,
        &p,
        "!!!",
        &["accept", "confirm"],
        p.rooms[1],
        "2030-06-02T08:00:00Z",
    )
    .await;
    sql(
        &app,
        "UPDATE talk_submissions SET description = $1 WHERE code = $2",
        vec![
            "Line\u{1b}[31m one\r\n\u{7}two\u{fffe}\u{9b}".into(),
            code.clone().into(),
        ],
    )
    .await;
    sql(
        &app,
        "INSERT INTO talk_resources (submission_id, link, description, is_public) \
         SELECT id, 'https://example.org/slides', 'Slides & notes', $1 FROM talk_submissions \
         WHERE code = $2",
        vec![true.into(), code.into()],
    )
    .await;
    release(&app, &p, "v2 <final>").await;
    let dir = tempfile::tempdir().expect("a directory");
    let (xml, json_file) = (dir.path().join("schedule.xml"), dir.path().join("s.json"));
    std::fs::write(&xml, text(&anonymous(&app, XML).await)).expect("written");
    std::fs::write(&json_file, text(&anonymous(&app, JSON).await)).expect("written");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/frab");
    let out = tokio::process::Command::new(python)
        .arg(fixtures.join("validate.py"))
        .arg(&xml)
        .arg(&json_file)
        .output()
        .await
        .expect("the validator runs");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(said.matches(": valid against").count(), 2, "{said}");
}

/// Waits until the app's process cache holds answers (on PostgreSQL once it listens).
async fn cache_live(app: &TestApp) {
    for _ in 0..100 {
        if app.state.cache.generation().await.is_some() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the process cache never went live");
}

#[tokio::test]
async fn kept_exports_and_public_slot_pages_cost_one_query_and_a_release_shows_at_once() {
    let app = TestApp::spawn().await;
    let p = program(&app).await;
    released(&app, &p).await;
    cache_live(&app).await;
    let slots = p.url("slots/?page_size=1");
    for path in [JSON, XML, ICS, slots.as_str()] {
        let made = anonymous(&app, path).await;
        assert_eq!(made.status, 200, "{path}: {}", made.body);
        let (kept, queries) = tessera::db::count_queries(anonymous(&app, path)).await;
        assert_eq!(kept.status, 200, "{path}");
        assert_eq!(text(&kept), text(&made), "{path}");
        assert_eq!(
            queries, 1,
            "{path} kept: the event with its current schedule"
        );
    }
    let page = anonymous(&app, &slots).await;
    assert_eq!(page.body["count"], 2);
    assert!(
        page.body["next"]
            .as_str()
            .is_some_and(|n| n.contains("page=2")),
        "{}",
        page.body
    );
    // Filters and tokens are answered as before, not kept.
    let r = anonymous(&app, &p.url("slots/?is_visible=false")).await;
    assert_eq!(r.body["count"], 0, "{}", r.body);
    let r = app.get(&p.url("slots/"), &p.c.read).await;
    assert_eq!(
        r.body["count"], 3,
        "organisers see the hidden slot: {}",
        r.body
    );

    // Another session and a new release: the next requests show it.
    session(
        &app,
        &p,
        "Encore",
        &["accept", "confirm"],
        p.rooms[0],
        "2030-06-02T09:00:00Z",
    )
    .await;
    release(&app, &p, "v2").await;
    let r = anonymous(&app, JSON).await;
    assert_eq!(r.body["schedule"]["version"], "v2");
    assert!(text(&r).contains("Encore"));
    assert!(text(&anonymous(&app, XML).await).contains("<version>v2</version>"));
    assert!(text(&anonymous(&app, ICS).await).contains("SUMMARY:Encore"));
    let page = anonymous(&app, &slots).await;
    assert_eq!(page.body["count"], 3, "{}", page.body);
}

#[tokio::test]
async fn a_release_through_one_server_is_served_by_another_on_its_next_request() {
    let one = TestApp::spawn().await;
    let url = one.state.config.database_url.clone();
    let two = TestApp::spawn_with(|c| c.database_url = url).await;
    let p = program(&one).await;
    released(&one, &p).await;
    cache_live(&one).await;
    cache_live(&two).await;
    for app in [&one, &two] {
        let r = anonymous(app, JSON).await;
        assert_eq!(r.body["schedule"]["version"], "v1", "{}", r.body);
        let r = anonymous(app, &p.url("slots/")).await;
        assert_eq!(r.body["count"], 2, "{}", r.body);
    }
    session(
        &one,
        &p,
        "Encore",
        &["accept", "confirm"],
        p.rooms[0],
        "2030-06-02T09:00:00Z",
    )
    .await;
    // Released through the second server, whose first server kept v1.
    let r = two
        .post(
            &p.url("schedules/release/"),
            &p.c.write,
            json!({"version": "v2"}),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.body);
    for app in [&one, &two] {
        let r = anonymous(app, JSON).await;
        assert_eq!(r.body["schedule"]["version"], "v2", "{}", r.body);
        let r = anonymous(app, &p.url("slots/")).await;
        assert_eq!(r.body["count"], 3, "{}", r.body);
    }
}

#[tokio::test]
async fn organisers_read_the_exports_of_released_schedules_through_the_api() {
    let app = TestApp::spawn().await;
    let p = program(&app).await;
    released(&app, &p).await;
    sql(
        &app,
        "UPDATE events SET is_public = $1 WHERE id = $2",
        vec![false.into(), p.c.event.into()],
    )
    .await;
    let id = app.get(&p.url("schedules/latest/"), &p.c.write).await.body["id"]
        .as_i64()
        .expect("an ID");
    for (name, content_type) in [
        ("schedule.json", "application/json"),
        ("schedule.xml", "text/xml"),
        ("schedule.ics", "text/calendar"),
    ] {
        for schedule in [id.to_string(), "latest".into()] {
            let url = p.url(&format!("schedules/{schedule}/exporters/{name}/"));
            let r = app.get(&url, &p.c.write).await;
            assert_eq!(r.status, 200, "{url}: {}", r.body);
            assert_eq!(r.header("content-type"), Some(content_type));
        }
    }
    let r = app
        .get(
            &p.url(&format!("schedules/{id}/exporters/schedule.json/?lang=de")),
            &p.c.write,
        )
        .await;
    assert_eq!(r.body["schedule"]["conference"]["rooms"][0]["name"], "Saal");
    let wip = app.get(&p.url("schedules/wip/"), &p.c.write).await.body["id"]
        .as_i64()
        .expect("an ID");
    for path in [
        format!("schedules/{wip}/exporters/schedule.json/"),
        format!("schedules/{id}/exporters/speakers.csv/"),
        format!("schedules/{}/exporters/schedule.json/", id + 1000),
        "schedules/nothing/exporters/schedule.json/".into(),
    ] {
        let r = app.get(&p.url(&path), &p.c.write).await;
        assert_eq!(r.status, 404, "{path}: {}", r.body);
    }
    let url = p.url(&format!("schedules/{id}/exporters/schedule.xml/"));
    assert_eq!(app.get(&url, &p.c.reviewer).await.status, 403);
    assert_eq!(app.get(&url, &p.c.read).await.status, 403, "actions scope");
    let r = app.call(Method::GET, &url, None, None).await;
    assert_eq!(r.status, 401, "{}", r.body);
    let mut scoped = Endpoints::default();
    scoped.0.insert("schedules".into(), vec![Action::Actions]);
    let token = user_token(&app, p.c.orga_user, &scoped, None).await;
    assert_eq!(app.get(&url, &token).await.status, 200);
    let mut other = Endpoints::default();
    other.0.insert("slots".into(), Action::ALL.to_vec());
    let token = user_token(&app, p.c.orga_user, &other, None).await;
    assert_eq!(app.get(&url, &token).await.status, 403);
}

#[tokio::test]
async fn the_demo_conference_has_a_released_schedule_in_its_exports() {
    let app = TestApp::spawn().await;
    tessera::admin::seed_demo(&app.state).await.expect("seed");
    tessera::admin::seed_demo(&app.state)
        .await
        .expect("seed again");
    let event = tessera::admin::DEMO_EVENT;
    let r = anonymous(&app, &format!("/{event}/schedule/export/schedule.json")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let conf = &r.body["schedule"]["conference"];
    let talks: Vec<&Value> = conf["days"]
        .as_array()
        .expect("days")
        .iter()
        .flat_map(|d| d["rooms"].as_object().expect("rooms").values())
        .flat_map(|r| r.as_array().expect("talks"))
        .collect();
    assert_eq!(talks.len(), 3, "the three confirmed sessions: {}", r.body);
    assert_eq!(conf["rooms"].as_array().expect("rooms").len(), 3);
    let r = anonymous(&app, &format!("/api/events/{event}/slots/")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(results(&r.body).len(), 3);
    for name in ["schedule.xml", "schedule.ics"] {
        let r = anonymous(&app, &format!("/{event}/schedule/export/{name}")).await;
        assert_eq!(r.status, 200, "{name}");
    }
}

#[tokio::test]
async fn made_up_languages_and_page_numbers_do_not_crowd_kept_answers_out() {
    let app = TestApp::spawn().await;
    let p = program(&app).await;
    released(&app, &p).await;
    cache_live(&app).await;
    let slots = p.url("slots/?page_size=1");
    assert_eq!(anonymous(&app, &slots).await.status, 200);
    let held = app.state.cache.answers_held();
    assert!(held >= 1, "the page is kept");
    // More made-up variants than the cache holds answers: none may take a place.
    for i in 0..(tessera::domain::cache::MAX_ANSWERS + 100) {
        let path = match i % 4 {
            0 => p.url(&format!("slots/?lang=x{i}")),
            1 => format!("{JSON}?lang=y{i}"),
            2 => p.url(&format!("slots/?page_size={}1", "0".repeat(i % 40 + 1))),
            _ => p.url(&format!("slots/?page_size={}", 51 + i)),
        };
        assert_eq!(anonymous(&app, &path).await.status, 200, "{path}");
    }
    // Whatever the generation did meanwhile (other tests' changes move it on PostgreSQL),
    // not one made-up variant was kept.
    assert_eq!(app.state.cache.answers_held(), held, "nothing more kept");
}
