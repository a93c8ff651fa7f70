//! Assembling and running a server: [`App`] takes the configuration and the plugins,
//! connects and migrates the database, and gives a [`Server`] to run or to test.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use poem::endpoint::{BoxEndpoint, make_sync};
use poem::middleware::{NormalizePath, TrailingSlash};
use poem::web::Html;
use poem::{EndpointExt, get, post};
use poem_openapi::OpenApiService;
use sea_orm::{DatabaseConnection, DbErr};
use serde_json::Value;

use crate::config::Config;
use crate::domain::layouts::Kind;
use crate::domain::mail::Mailer;
use crate::http::middleware::{Gate, shared_behaviour};
use crate::http::routes::{RouteTable, add_trailing_slashes};
use crate::http::serve::ConnectionLimits;
use crate::plugin::api::{Mounts, WithPlugins};
use crate::plugin::{Plugin, PluginRegistry};
use crate::state::AppState;
use crate::web::pages::Site;

/// Builds a Tessera server from a configuration and a list of plugins.
pub struct App {
    config: Config,
    plugins: PluginRegistry,
}

/// Why a server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The database could not be opened or migrated.
    #[error("database: {}", crate::db::describe(.0))]
    Database(#[from] DbErr),
    /// The mail settings cannot work.
    #[error("mail: {0}")]
    Mail(#[from] crate::domain::mail::MailConfigError),
    /// The address could not be bound, or serving failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl App {
    /// A new app with this configuration and no plugins.
    pub fn new(config: Config) -> Self {
        Self {
            config,
            plugins: PluginRegistry::default(),
        }
    }

    /// The configuration the app was made with (plugins read theirs from it).
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Adds a compiled-in plugin.
    pub fn plugin(mut self, plugin: impl Plugin) -> Self {
        self.plugins.register(Arc::new(plugin));
        self
    }

    /// The OpenAPI document of the core and the plugins added so far.
    pub fn openapi_json(&self) -> String {
        openapi_json(&self.plugins)
    }

    /// Connects to the configured database, migrates it, loads the dynamic plugins of the
    /// configured plugin directory, and gives the server.
    pub async fn build(mut self) -> Result<Server, StartError> {
        if let Some(dir) = self.config.plugin_dir.clone() {
            for plugin in crate::plugin::dynamic::load_dir(&dir) {
                if self.plugins.is_registered(plugin.name()) {
                    tracing::error!(path = %dir.display(), plugin = plugin.name(), "plugin library refused: a plugin of that name is compiled in");
                } else {
                    tracing::info!(
                        plugin = plugin.name(),
                        version = plugin.version(),
                        "plugin library loaded"
                    );
                    self.plugins.register(plugin);
                }
            }
        }
        Mailer::check(&self.config)?;
        let url = self.config.effective_database_url();
        tracing::info!(database = %crate::db::describe_url(&url), "opening the database");
        let db = crate::db::connect_migrated(&url, self.config.db_max_connections).await?;
        Ok(self.with_database(db))
    }

    /// Gives the server on an already connected and migrated database.
    pub fn with_database(self, db: DatabaseConnection) -> Server {
        let public_url: Arc<str> = self.config.effective_public_url().into();
        let url = self.config.effective_database_url();
        let cache = crate::domain::cache::Cache::new(&db, &url);
        if tokio::runtime::Handle::try_current().is_ok() {
            cache.listen(&url);
        }
        let registry = Arc::new(self.plugins);
        let settings = Arc::new(registry.settings());
        let extensions: Arc<dyn crate::domain::extensions::Extensions> = registry.clone();
        let tickets = crate::domain::tickets::MailedTickets::new(
            db.clone(),
            settings.clone(),
            cache.clone(),
            extensions.clone(),
        );
        let invoices = crate::domain::invoices::files::MailedInvoices::new(
            db.clone(),
            settings.clone(),
            cache.clone(),
            extensions,
        );
        let attachments =
            crate::domain::mail::AllAttachments(vec![Arc::new(tickets), Arc::new(invoices)]);
        let mailer =
            Mailer::new(db.clone(), &self.config, Arc::new(attachments)).unwrap_or_else(|error| {
                tracing::error!(%error, "mail settings unusable; mails stay in the outbox");
                Mailer::outbox_only(db.clone())
            });
        let bookings = Arc::new(crate::domain::giftcards::bookings(db.clone()));
        let placements = Arc::new(crate::domain::orders::placements(db.clone()));
        let password_checks = Arc::new(crate::domain::users::PasswordChecks::new(
            self.config.password_checks_at_once,
            std::time::Duration::from_millis(self.config.password_check_wait_ms),
        ));
        Server {
            registry: registry.clone(),
            state: AppState {
                db,
                config: Arc::new(self.config),
                public_url,
                settings,
                plugins: registry,
                cache,
                mailer,
                bookings,
                placements,
                password_checks,
            },
        }
    }
}

/// A server ready to run.
pub struct Server {
    state: AppState,
    /// The plugins, whose routes the server mounts.
    registry: Arc<PluginRegistry>,
}

fn service() -> OpenApiService<impl poem_openapi::OpenApi, ()> {
    OpenApiService::new(
        (crate::api::ticketing_api(), crate::api::talk::talk_api()),
        "Tessera",
        env!("CARGO_PKG_VERSION"),
    )
    .description(
        "Event-ticketing back end. The `/api/v1/` interface follows pretix's REST API; the \
         talk side under `/api/` follows pretalx's (API version v2).",
    )
}

/// The core's OpenAPI document, before the plugins' paths join it.
fn core_document() -> Value {
    serde_json::from_str(&service().spec()).unwrap_or(Value::Null)
}

/// The plugins' endpoints, mounted beside the core's.
fn mounts(plugins: &PluginRegistry) -> Mounts {
    Mounts::new(plugins, &core_document())
}

/// The OpenAPI document of the API with these plugins' endpoints, as served; with the host
/// binary's compiled-in plugins, as written to `openapi/openapi.json`.
pub fn openapi_document(plugins: &PluginRegistry) -> Value {
    document(&mounts(plugins))
}

fn document(mounts: &Mounts) -> Value {
    let mut doc = core_document();
    crate::plugin::api::merge_specs(&mut doc, mounts);
    add_trailing_slashes(&mut doc);
    crate::http::document::complete(&mut doc);
    doc
}

/// [`openapi_document`] as pretty-printed JSON with a final newline.
pub fn openapi_json(plugins: &PluginRegistry) -> String {
    pretty(&openapi_document(plugins))
}

fn pretty(doc: &Value) -> String {
    let mut text = serde_json::to_string_pretty(doc).unwrap_or_default();
    text.push('\n');
    text
}

impl Server {
    /// The shared state (database, configuration, plugins).
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// The plugins the server was built with.
    pub fn plugins(&self) -> &PluginRegistry {
        &self.registry
    }

    /// The whole HTTP surface as one endpoint: the API under `/api/v1/`, the OpenAPI
    /// document at `/api/v1/openapi.json`, the interactive UI at `/docs/`, and the probes
    /// and metrics of [`crate::ops`].
    pub fn endpoint(&self) -> BoxEndpoint<'static> {
        let service = service();
        let mounts = Arc::new(mounts(&self.registry));
        let spec = document(&mounts);
        let document = pretty(&spec);
        let ops = Arc::new(crate::ops::Operations::new(&self.state, &spec));
        let gate = Arc::new(Gate::new(RouteTable::from_spec(&spec), &self.state.config));
        let ui = service
            .swagger_ui_html()
            .replace(&service.spec(), &document);
        let site = Site::new()
            .nest(
                "/api/v1/openapi.json",
                make_sync(move |_| {
                    poem::Response::builder()
                        .content_type("application/json")
                        .body(document.clone())
                }),
            )
            .nest("/docs", make_sync(move |_| Html(ui.clone())))
            .at("/media/:key/:filename", get(crate::api::files::media))
            .at(
                Kind::Ticket.blank_background_path(),
                get(make_sync(|_| {
                    crate::api::layouts::blank_background(Kind::Ticket)
                })),
            )
            .at(
                Kind::Badge.blank_background_path(),
                get(make_sync(|_| {
                    crate::api::layouts::blank_background(Kind::Badge)
                })),
            )
            .at(
                "/api/events/:event/talks/*rest",
                crate::api::talk::submissions::talks_redirect,
            )
            // Public schedule exports, as pretalx serves them (no other page has a
            // `schedule` segment second: the order pages have `order` third).
            .at(
                "/:event/schedule/export/:name",
                get(crate::api::talk::exports::public_export),
            )
            .at(
                "/:event/:name<schedule\\.(json|xml|ics)>",
                get(crate::api::talk::exports::public_export),
            )
            .at(
                "/:organizer/:event/order/:code/:secret",
                get(crate::web::orders::order_page),
            )
            .at(
                "/:organizer/:event/order/:code/:secret/pay/:local_id",
                get(crate::web::payment::payment_page).post(crate::web::payment::pay),
            )
            .at(
                "/:organizer/:event/order/:code/:secret/download/:output",
                get(crate::web::orders::ticket_download),
            )
            .at(
                "/:organizer/:event/order/:code/:secret/download/:output/:position",
                get(crate::web::orders::ticket_download),
            )
            .at(
                "/:organizer/:event/order/:code/:secret/invoice/:id",
                get(crate::web::orders::invoice_download),
            )
            .at(
                "/:organizer/:event/order/:code/:secret/cancel",
                get(crate::web::self_service::cancel_page),
            )
            .at(
                "/:organizer/:event/order/:code/:secret/cancel/do",
                poem::post(crate::web::self_service::cancel_do),
            )
            .at(
                "/:organizer/:event/resend",
                get(crate::web::self_service::resend_page).post(crate::web::self_service::resend),
            )
            .at(
                "/login",
                get(crate::web::login::login_page).post(crate::web::login::login),
            )
            .at("/logout", post(crate::web::login::logout))
            .at(
                "/invite/:secret",
                get(crate::web::invites::invite_page).post(crate::web::invites::accept),
            )
            .at(
                "/password/reset",
                get(crate::web::password_reset::request_page)
                    .post(crate::web::password_reset::request),
            )
            .at(
                "/password/reset/:token",
                get(crate::web::password_reset::reset_page).post(crate::web::password_reset::reset),
            )
            .at("/account", get(crate::web::account::account_page))
            .at("/account/profile", post(crate::web::profile::change_name))
            .at(
                "/account/password",
                post(crate::web::profile::change_password),
            )
            .at(
                "/account/authorized/:id/revoke",
                post(crate::web::account::revoke),
            )
            .at("/account/applications", post(crate::web::account::register))
            .at(
                "/account/applications/:id/secret",
                post(crate::web::account::new_secret),
            )
            .at(
                "/account/applications/:id/delete",
                post(crate::web::account::delete),
            )
            .at(
                "/account/team-tokens",
                post(crate::web::team_tokens::create),
            )
            .at(
                "/account/team-tokens/:id/revoke",
                post(crate::web::team_tokens::revoke),
            )
            .at("/orga/me", get(crate::web::talk_tokens::page))
            .at("/orga/me/tokens", post(crate::web::talk_tokens::create))
            .at(
                "/orga/me/tokens/:id/upgrade",
                post(crate::web::talk_tokens::upgrade),
            )
            .at(
                "/orga/me/tokens/:id/disable",
                post(crate::web::talk_tokens::disable),
            )
            // The API's paths (`/api/v1/...` and the talk side's `/api/...`) are all
            // under `/api`, which is the API's alone.
            .nest_no_strip("/api", service);
        let pages = self
            .registry
            .all()
            .iter()
            .map(|p| (p.name().to_owned(), p.pages()));
        let api = crate::web::payment::notice_routes(site, &*self.state.plugins)
            .with_pages(pages)
            .into_route();
        let state = self.state.clone();
        WithPlugins::new(api, mounts)
            .with(NormalizePath::new(TrailingSlash::Trim))
            .around(move |ep, req| shared_behaviour(ep, gate.clone(), req))
            .around(crate::api::checkin::greedy_secret)
            .data(state)
            .around(move |ep, req| crate::ops::front(ep, ops.clone(), req))
            .boxed()
    }

    /// The endpoint of the `metrics_bind` address: `/metrics`, `/healthz` and `/readyz`.
    pub fn operations_endpoint(&self) -> BoxEndpoint<'static> {
        crate::ops::endpoint(&self.state)
    }

    /// How many connections this server serves at once (`max_connections`) and how long
    /// they may take (`header_read_timeout_secs`), with `shutdown_grace` for the requests
    /// under way when it stops.
    pub fn connection_limits(&self, shutdown_grace: Option<Duration>) -> ConnectionLimits {
        ConnectionLimits {
            max_connections: self.state.config.max_connections,
            max_per_address: self.state.config.max_connections_per_address,
            uncapped: self.state.config.trusted_proxies.clone(),
            header_read: self.state.config.header_read_timeout(),
            shutdown_grace,
        }
    }

    /// Serves [`Server::endpoint`] on an already bound listener until `shutdown` completes,
    /// then lets the requests under way finish (30 s at most).
    pub async fn serve(
        &self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()>,
    ) -> std::io::Result<()> {
        let limits = self.connection_limits(Some(SHUTDOWN_GRACE));
        crate::http::serve::serve(listener, self.endpoint(), limits, shutdown).await
    }

    /// Serves until SIGINT or SIGTERM, then finishes the requests under way.
    pub async fn run(self) -> Result<(), StartError> {
        let bind = self.state.config.bind.clone();
        let listener = tokio::net::TcpListener::bind(&bind)
            .await
            .map_err(|e| std::io::Error::new(e.kind(), format!("bind {bind}: {e}")))?;
        tracing::info!(%bind, public_url = %self.state.public_url, "serving");
        if self.state.mailer.spawn().is_none() {
            tracing::info!("no smtp_host: mails stay in the outbox (`tessera admin outbox`)");
        }
        tokio::spawn(crate::domain::availability::sweep_every(
            self.state.db.clone(),
            Duration::from_secs(60),
        ));
        tokio::spawn(crate::domain::checkin::exit_all::sweep_every(
            self.state.db.clone(),
            Duration::from_secs(60),
        ));
        tokio::spawn(crate::domain::webhooks::deliver_every_second(
            self.state.db.clone(),
            self.state.config.webhooks_allow_private_targets,
        ));
        tokio::spawn(crate::domain::talk::tokens::delete_expired_every(
            self.state.db.clone(),
            Duration::from_secs(60 * 60),
        ));
        tokio::spawn(crate::domain::password_resets::delete_expired_every(
            self.state.db.clone(),
            Duration::from_secs(60 * 60),
        ));
        let operations = crate::ops::listen(&self.state).await?;
        let served = self.serve(listener, shutdown_signal()).await;
        if let Some(task) = operations {
            task.abort();
        }
        served?;
        tracing::info!("stopped");
        Ok(())
    }
}

/// How long the requests under way at a shutdown may take to finish.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}
