//! The pages port: an extension's pages are mounted beside the core's, never in place of
//! them; forms of this site are refused without their CSRF token; widget routes are
//! readable and frameable from any site.

use std::sync::Arc;

use serde_json::json;
use tessera::Plugin;
use tessera::plugin::pages::{
    Page, PageAnswer, PageContext, PageMethod, PageRequest, PageRoute, Pages,
};
use tessera_tests::TestApp;

use crate::browser_support::{Browser, csrf_field, html};

/// Echoes the reader's form or path back through a template of its own.
struct Echo;

#[async_trait::async_trait]
impl Page for Echo {
    async fn answer(
        &self,
        _cx: &PageContext<'_>,
        req: &PageRequest,
    ) -> Result<PageAnswer, sea_orm::DbErr> {
        let said = req.field("said").or(req.query("said")).unwrap_or_default();
        Ok(PageAnswer::html(
            "echo/page.html",
            json!({"said": said, "name": req.param("name")}),
        ))
    }
}

/// A plugin whose pages try paths the core serves as well as a new one.
struct Pushy;

impl Plugin for Pushy {
    fn name(&self) -> &str {
        "pushy"
    }
    fn version(&self) -> &str {
        "1"
    }
    fn description(&self) -> &str {
        "pages that try to take the core's paths"
    }
    fn pages(&self) -> Pages {
        let echo: Arc<dyn Page> = Arc::new(Echo);
        Pages {
            routes: vec![
                PageRoute::own("/login", PageMethod::Get, echo.clone()),
                PageRoute::own("/api/v1/organizers", PageMethod::Get, echo.clone()),
                PageRoute::own("/:o/:e/order/:c/:s", PageMethod::Get, echo.clone()),
                PageRoute::own("/echo/:name", PageMethod::Get, echo.clone()),
                PageRoute::own("/echo/:name", PageMethod::Post, echo.clone()),
                PageRoute::widget("/echo-widget/:name", PageMethod::Post, echo),
            ],
            templates: vec![
                (
                    "echo/page.html",
                    "{% extends \"base.html\" %}{% block content %}<p id=said>{{ said }}</p>\
                     <p id=name>{{ name }}</p><form method=post>\
                     <input type=\"hidden\" name=\"csrfmiddlewaretoken\" value=\"{{ csrf_token }}\"></form>\
                     {% endblock %}",
                ),
                (
                    "base.html",
                    "a template that would replace the core's layout",
                ),
            ],
        }
    }
}

async fn app() -> TestApp {
    TestApp::spawn_app(|_| {}, |app| app.plugin(Pushy)).await
}

#[tokio::test]
async fn an_extensions_page_never_takes_a_path_or_template_of_the_core() {
    let app = app().await;
    let mut browser = Browser::new(&app);
    let login = browser.get("/login").await;
    assert!(html(&login).contains("password"), "{}", login.body);
    let api = app
        .raw(
            poem::http::Method::GET,
            "/api/v1/organizers",
            &[],
            Vec::new(),
        )
        .await;
    assert_eq!(api.status, 401, "{}", api.body);
    let page = browser.get("/echo/ada?said=%3Cb%3Ehi").await;
    assert_eq!(page.status, 200);
    let body = html(&page);
    assert!(body.contains("<p id=said>&lt;b&gt;hi</p>"), "{body}");
    assert!(body.contains("<p id=name>ada</p>"), "{body}");
    assert!(
        body.contains("<!doctype html>"),
        "the core's layout stays: {body}"
    );
    assert_eq!(page.header("x-frame-options"), Some("DENY"));
}

#[tokio::test]
async fn a_form_of_this_site_needs_its_csrf_token_and_a_widgets_post_does_not() {
    let app = app().await;
    let mut browser = Browser::new(&app);
    let refused = browser.post("/echo/ada", &[("said", "hello")]).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    let page = browser.get("/echo/ada").await;
    let token = csrf_field(html(&page));
    let posted = browser
        .post(
            "/echo/ada",
            &[("said", "hello"), ("csrfmiddlewaretoken", &token)],
        )
        .await;
    assert_eq!(posted.status, 200, "{}", posted.body);
    assert!(html(&posted).contains("<p id=said>hello</p>"));

    let widget = Browser::new(&app)
        .post("/echo-widget/ada", &[("said", "from afar")])
        .await;
    assert_eq!(widget.status, 200, "{}", widget.body);
    assert!(html(&widget).contains("from afar"));
    assert_eq!(widget.header("x-frame-options"), None);
    let policy = widget.header("content-security-policy").unwrap_or_default();
    assert!(policy.contains("frame-ancestors *"), "{policy}");
}
