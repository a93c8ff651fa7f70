//! Typed configuration. Sources, highest precedence first: command-line flags (given to
//! [`Config::load`] as [`Overrides`]), environment variables `TESSERA_*`, an optional TOML
//! file, and the defaults.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

/// How request and application logs are written.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// How the connection to the SMTP server is secured.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SmtpTls {
    /// Plain text (a local relay, or tests).
    None,
    /// Plain text upgraded with `STARTTLS`, which is required (port 587 by default).
    #[default]
    Starttls,
    /// TLS from the first byte (port 465 by default).
    Tls,
}

impl SmtpTls {
    /// The usual port of the mode: 25, 587 or 465.
    pub fn default_port(self) -> u16 {
        match self {
            SmtpTls::None => 25,
            SmtpTls::Starttls => 587,
            SmtpTls::Tls => 465,
        }
    }
}

/// The service configuration.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Address to listen on.
    pub bind: String,
    /// Database URL (`sqlite://...` or `postgres://...`); default: a SQLite file in `data_dir`.
    pub database_url: Option<String>,
    /// Directory for the SQLite database and other local state.
    pub data_dir: PathBuf,
    /// Public base URL used for absolute URLs in responses; default: `http://{bind}`.
    pub public_url: Option<String>,
    /// Log format.
    pub log_format: LogFormat,
    /// Requests per minute allowed per credential (counted in each process); `None` or 0
    /// turns rate limiting off.
    pub rate_limit_per_minute: Option<u32>,
    /// Requests per minute allowed per client address for requests without valid
    /// credentials (public pages, failed authentication); default: `rate_limit_per_minute`;
    /// 0 turns it off.
    pub anonymous_rate_limit_per_minute: Option<u32>,
    /// Addresses of reverse proxies whose `X-Forwarded-For` names the client; requests from
    /// any other address are taken to come from that address.
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// Largest request body accepted, in bytes (uploads have their own limit); larger ones
    /// are answered 413 before they are read.
    pub max_body_bytes: usize,
    /// Largest file accepted by the talk side's upload (`POST /api/upload/`), in bytes;
    /// default 10 MiB. Each caller's unused uploads stay limited to 100 files and 100 MiB
    /// together.
    pub talk_upload_max_bytes: usize,
    /// How many objects `?expand=` may build into one talk-side answer (every copy of an
    /// object placed into another counts, with what is expanded inside it); an expansion
    /// beyond it is refused with 400. Default 10,000.
    pub expand_max_objects: usize,
    /// Passwords checked at once per process (sign-ins: each check takes a core and about
    /// 19 MiB for tens of milliseconds); further checks wait their turn. Default: the number
    /// of cores, at least 2 and at most 8.
    pub password_checks_at_once: usize,
    /// Milliseconds a password check waits for its turn before the sign-in is answered 503
    /// with `Retry-After`. Default 5,000.
    pub password_check_wait_ms: u64,
    /// Seconds a client may take to send a request's line and headers, counted from the
    /// connection's opening or the end of the previous answer: a connection that sends
    /// them slower, or nothing, is closed, as is a kept-alive one idle that long. At least 1.
    pub header_read_timeout_secs: u64,
    /// Seconds a client may take to send a request body (an upload: between two pieces of
    /// it); a body slower than that is answered 408. At least 1.
    pub body_read_timeout_secs: u64,
    /// Connections served at once per listener; further ones wait in the kernel's backlog
    /// until one closes. At least 1.
    pub max_connections: usize,
    /// Connections served at once per client address (IPv6: per /64); one more is closed at
    /// once. Addresses in `trusted_proxies` are not capped (the proxy must limit its
    /// clients). At least 1.
    pub max_connections_per_address: usize,
    /// Bytes a second an upload must arrive at, on average, once `body_read_timeout_secs`
    /// have passed (a client that trickles a large file in holds a connection). At least 1.
    pub min_upload_bytes_per_sec: u64,
    /// Size of the database connection pool.
    pub db_max_connections: u32,
    /// SMTP server for outgoing mail; without it mails stay in the outbox.
    pub smtp_host: Option<String>,
    /// SMTP port; default: the usual port of `smtp_tls`.
    pub smtp_port: Option<u16>,
    /// SMTP user name; with `smtp_password`, the server is logged in to.
    pub smtp_username: Option<String>,
    /// SMTP password.
    pub smtp_password: Option<String>,
    /// How the SMTP connection is secured.
    pub smtp_tls: SmtpTls,
    /// Sender address of outgoing mail, e.g. `Tickets <tickets@example.com>`.
    pub mail_from: String,
    /// Directory of dynamic plugins (shared libraries) loaded at start.
    pub plugin_dir: Option<PathBuf>,
    /// pretix's widget bundle (`pretix/static.dist/vite/widget/widget.js` of pretix's wheel),
    /// which the shop serves wrapped at `/widget/v2.{lang}.js`; none: no widget script.
    pub widget_bundle: Option<PathBuf>,
    /// A second address, served by the same process, that answers only `/metrics`,
    /// `/healthz` and `/readyz` (bind it to loopback or an internal network).
    pub metrics_bind: Option<String>,
    /// A token that opens `/metrics` on the main address (`Authorization: Bearer <token>`);
    /// when set, the metrics address asks for it too. Without this nor `metrics_bind`,
    /// `/metrics` is not served.
    pub metrics_token: Option<String>,
    /// Let webhooks call targets on loopback and private networks (development and tests;
    /// off by default, so that a webhook cannot reach the operator's internal services).
    pub webhooks_allow_private_targets: bool,
    /// Where Stripe's REST API is (the `stripe` plugin's); a stand-in such as `localstripe`
    /// may take its place.
    pub stripe_api_base: String,
    /// Where Stripe.js is, which the payment page loads.
    pub stripe_js_url: String,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            bind: "127.0.0.1:8000".into(),
            database_url: None,
            data_dir: PathBuf::from("data"),
            public_url: None,
            log_format: LogFormat::Text,
            rate_limit_per_minute: None,
            anonymous_rate_limit_per_minute: None,
            trusted_proxies: Vec::new(),
            max_body_bytes: 1024 * 1024,
            talk_upload_max_bytes: 10 * 1024 * 1024,
            expand_max_objects: 10_000,
            password_checks_at_once: std::thread::available_parallelism()
                .map_or(2, std::num::NonZero::get)
                .clamp(2, 8),
            password_check_wait_ms: 5_000,
            header_read_timeout_secs: 10,
            body_read_timeout_secs: 30,
            max_connections: 2048,
            max_connections_per_address: 128,
            min_upload_bytes_per_sec: 1024,
            db_max_connections: 16,
            smtp_host: None,
            smtp_port: None,
            smtp_username: None,
            smtp_password: None,
            smtp_tls: SmtpTls::default(),
            mail_from: "tessera@localhost".into(),
            plugin_dir: None,
            widget_bundle: None,
            metrics_bind: None,
            metrics_token: None,
            webhooks_allow_private_targets: false,
            stripe_api_base: "https://api.stripe.com".into(),
            stripe_js_url: "https://js.stripe.com/v3/".into(),
        }
    }
}

/// Values given on the command line; each one set wins over every other source.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// `--config FILE`.
    pub config_file: Option<PathBuf>,
    /// `--bind ADDR`.
    pub bind: Option<String>,
    /// `--database-url URL`.
    pub database_url: Option<String>,
    /// `--data-dir DIR`.
    pub data_dir: Option<PathBuf>,
}

/// The configuration file `tessera admin` reads when neither `--config` nor
/// `TESSERA_CONFIG` names one and it exists, so that an operator's command finds the
/// service's settings wherever it is started (the deployment guide's unit names this file).
/// Only operator commands look here: `tessera demo` never seeds a production database.
pub const DEFAULT_FILE: &str = "/etc/tessera/tessera.toml";

/// A configuration that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The TOML file could not be read or parsed.
    #[error("config file {path}: {message}")]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// An environment variable has a value of the wrong type.
    #[error("environment variable {name}: {message}")]
    Env {
        /// The variable.
        name: &'static str,
        /// What went wrong.
        message: String,
    },
}

impl Config {
    /// Reads the configuration from the process environment, the TOML file named by
    /// `overrides.config_file` or `TESSERA_CONFIG`, and the overrides.
    pub fn load(overrides: Overrides) -> Result<Self, ConfigError> {
        Self::load_from(overrides, |name| std::env::var(name).ok())
    }

    /// Like [`Config::load`], with the environment given as a lookup function.
    pub fn load_from(
        overrides: Overrides,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let file = overrides
            .config_file
            .clone()
            .or_else(|| env("TESSERA_CONFIG").map(PathBuf::from));
        let mut config = match file {
            Some(path) => Self::from_file(&path)?,
            None => Self::default(),
        };
        if let Some(v) = env("TESSERA_BIND") {
            config.bind = v;
        }
        if let Some(v) = env("TESSERA_DATABASE_URL") {
            config.database_url = Some(v);
        }
        if let Some(v) = env("TESSERA_DATA_DIR") {
            config.data_dir = PathBuf::from(v);
        }
        if let Some(v) = env("TESSERA_PLUGIN_DIR") {
            config.plugin_dir = Some(PathBuf::from(v));
        }
        if let Some(v) = env("TESSERA_WIDGET_BUNDLE") {
            config.widget_bundle = Some(PathBuf::from(v)).filter(|p| !p.as_os_str().is_empty());
        }
        if let Some(v) = env("TESSERA_PUBLIC_URL") {
            config.public_url = Some(v);
        }
        if let Some(v) = env("TESSERA_LOG_FORMAT") {
            config.log_format = match v.as_str() {
                "text" => LogFormat::Text,
                "json" => LogFormat::Json,
                _ => {
                    return Err(ConfigError::Env {
                        name: "TESSERA_LOG_FORMAT",
                        message: "expected `text` or `json`".into(),
                    });
                }
            };
        }
        if let Some(v) = env("TESSERA_RATE_LIMIT_PER_MINUTE") {
            config.rate_limit_per_minute = Some(v.parse().map_err(|_| ConfigError::Env {
                name: "TESSERA_RATE_LIMIT_PER_MINUTE",
                message: "expected a whole number".into(),
            })?);
        }
        if let Some(v) = env("TESSERA_ANONYMOUS_RATE_LIMIT_PER_MINUTE") {
            config.anonymous_rate_limit_per_minute =
                Some(v.parse().map_err(|_| ConfigError::Env {
                    name: "TESSERA_ANONYMOUS_RATE_LIMIT_PER_MINUTE",
                    message: "expected a whole number".into(),
                })?);
        }
        if let Some(v) = env("TESSERA_TRUSTED_PROXIES") {
            config.trusted_proxies = v
                .split(',')
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .map(str::parse)
                .collect::<Result<_, _>>()
                .map_err(|_| ConfigError::Env {
                    name: "TESSERA_TRUSTED_PROXIES",
                    message: "expected IP addresses separated by commas".into(),
                })?;
        }
        if let Some(v) = env("TESSERA_MAX_BODY_BYTES") {
            config.max_body_bytes = v.parse().map_err(|_| ConfigError::Env {
                name: "TESSERA_MAX_BODY_BYTES",
                message: "expected a whole number".into(),
            })?;
        }
        if let Some(v) = env("TESSERA_TALK_UPLOAD_MAX_BYTES") {
            config.talk_upload_max_bytes = v.parse().map_err(|_| ConfigError::Env {
                name: "TESSERA_TALK_UPLOAD_MAX_BYTES",
                message: "expected a whole number".into(),
            })?;
        }
        for (name, setting) in [
            (
                "TESSERA_HEADER_READ_TIMEOUT_SECS",
                &mut config.header_read_timeout_secs,
            ),
            (
                "TESSERA_BODY_READ_TIMEOUT_SECS",
                &mut config.body_read_timeout_secs,
            ),
        ] {
            if let Some(v) = env(name) {
                *setting = v.parse().map_err(|_| ConfigError::Env {
                    name,
                    message: "expected a whole number of seconds".into(),
                })?;
            }
        }
        if let Some(v) = env("TESSERA_EXPAND_MAX_OBJECTS") {
            config.expand_max_objects = v.parse().map_err(|_| ConfigError::Env {
                name: "TESSERA_EXPAND_MAX_OBJECTS",
                message: "expected a whole number".into(),
            })?;
        }
        if let Some(v) = env("TESSERA_PASSWORD_CHECKS_AT_ONCE") {
            config.password_checks_at_once = v.parse().map_err(|_| ConfigError::Env {
                name: "TESSERA_PASSWORD_CHECKS_AT_ONCE",
                message: "expected a whole number".into(),
            })?;
        }
        if let Some(v) = env("TESSERA_PASSWORD_CHECK_WAIT_MS") {
            config.password_check_wait_ms = v.parse().map_err(|_| ConfigError::Env {
                name: "TESSERA_PASSWORD_CHECK_WAIT_MS",
                message: "expected a whole number".into(),
            })?;
        }
        if let Some(v) = env("TESSERA_MAX_CONNECTIONS") {
            config.max_connections = v.parse().map_err(|_| ConfigError::Env {
                name: "TESSERA_MAX_CONNECTIONS",
                message: "expected a whole number".into(),
            })?;
        }
        if let Some(v) = env("TESSERA_MAX_CONNECTIONS_PER_ADDRESS") {
            config.max_connections_per_address = v.parse().map_err(|_| ConfigError::Env {
                name: "TESSERA_MAX_CONNECTIONS_PER_ADDRESS",
                message: "expected a whole number".into(),
            })?;
        }
        if let Some(v) = env("TESSERA_MIN_UPLOAD_BYTES_PER_SEC") {
            config.min_upload_bytes_per_sec = v.parse().map_err(|_| ConfigError::Env {
                name: "TESSERA_MIN_UPLOAD_BYTES_PER_SEC",
                message: "expected a whole number".into(),
            })?;
        }
        if let Some(v) = env("TESSERA_DB_MAX_CONNECTIONS") {
            config.db_max_connections = v.parse().map_err(|_| ConfigError::Env {
                name: "TESSERA_DB_MAX_CONNECTIONS",
                message: "expected a whole number".into(),
            })?;
        }
        config.apply_mail_env(&env)?;
        for (name, field) in [
            ("TESSERA_STRIPE_API_BASE", &mut config.stripe_api_base),
            ("TESSERA_STRIPE_JS_URL", &mut config.stripe_js_url),
        ] {
            if let Some(v) = env(name) {
                if !(v.starts_with("https://") || v.starts_with("http://")) {
                    return Err(ConfigError::Env {
                        name,
                        message: "expected an http(s):// address".into(),
                    });
                }
                *field = v;
            }
        }
        if let Some(v) = env("TESSERA_METRICS_BIND") {
            config.metrics_bind = Some(v).filter(|a| !a.is_empty());
        }
        if let Some(v) = env("TESSERA_METRICS_TOKEN") {
            config.metrics_token = Some(v);
        }
        if let Some(v) = env("TESSERA_WEBHOOKS_ALLOW_PRIVATE_TARGETS") {
            config.webhooks_allow_private_targets = match v.as_str() {
                "true" | "1" => true,
                "false" | "0" | "" => false,
                _ => {
                    return Err(ConfigError::Env {
                        name: "TESSERA_WEBHOOKS_ALLOW_PRIVATE_TARGETS",
                        message: "expected true or false".into(),
                    });
                }
            };
        }
        if let Some(v) = overrides.bind {
            config.bind = v;
        }
        if let Some(v) = overrides.database_url {
            config.database_url = Some(v);
        }
        if let Some(v) = overrides.data_dir {
            config.data_dir = v;
        }
        Ok(config)
    }

    /// The `TESSERA_SMTP_*` and `TESSERA_MAIL_FROM` variables.
    fn apply_mail_env(&mut self, env: &impl Fn(&str) -> Option<String>) -> Result<(), ConfigError> {
        if let Some(v) = env("TESSERA_SMTP_HOST") {
            self.smtp_host = Some(v).filter(|h| !h.is_empty());
        }
        if let Some(v) = env("TESSERA_SMTP_PORT") {
            self.smtp_port = Some(v.parse().map_err(|_| ConfigError::Env {
                name: "TESSERA_SMTP_PORT",
                message: "expected a port number".into(),
            })?);
        }
        if let Some(v) = env("TESSERA_SMTP_USERNAME") {
            self.smtp_username = Some(v);
        }
        if let Some(v) = env("TESSERA_SMTP_PASSWORD") {
            self.smtp_password = Some(v);
        }
        if let Some(v) = env("TESSERA_SMTP_TLS") {
            self.smtp_tls = match v.as_str() {
                "none" => SmtpTls::None,
                "starttls" => SmtpTls::Starttls,
                "tls" => SmtpTls::Tls,
                _ => {
                    return Err(ConfigError::Env {
                        name: "TESSERA_SMTP_TLS",
                        message: "expected `none`, `starttls` or `tls`".into(),
                    });
                }
            };
        }
        if let Some(v) = env("TESSERA_MAIL_FROM") {
            self.mail_from = v;
        }
        Ok(())
    }

    fn from_file(path: &Path) -> Result<Self, ConfigError> {
        let err = |message: String| ConfigError::File {
            path: path.to_owned(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        toml::from_str(&text).map_err(|e| err(e.to_string()))
    }

    /// The database URL in effect: the configured one, or a SQLite file in the data directory.
    pub fn effective_database_url(&self) -> String {
        match &self.database_url {
            Some(url) => url.clone(),
            None => format!(
                "sqlite://{}?mode=rwc",
                self.data_dir.join("tessera.sqlite3").display()
            ),
        }
    }

    /// [`Config::header_read_timeout_secs`], at least one second.
    pub fn header_read_timeout(&self) -> Duration {
        Duration::from_secs(self.header_read_timeout_secs.max(1))
    }

    /// [`Config::body_read_timeout_secs`], at least one second.
    pub fn body_read_timeout(&self) -> Duration {
        Duration::from_secs(self.body_read_timeout_secs.max(1))
    }

    /// The public base URL without a trailing slash.
    pub fn effective_public_url(&self) -> String {
        match &self.public_url {
            Some(url) => url.trim_end_matches('/').to_owned(),
            None => format!("http://{}", self.bind),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_talk_upload_limit_comes_from_the_environment() {
        assert_eq!(Config::default().talk_upload_max_bytes, 10 * 1024 * 1024);
        let env = |name: &str| (name == "TESSERA_TALK_UPLOAD_MAX_BYTES").then(|| "2048".into());
        let config = Config::load_from(Overrides::default(), env).expect("config");
        assert_eq!(config.talk_upload_max_bytes, 2048);
        let bad = |name: &str| (name == "TESSERA_TALK_UPLOAD_MAX_BYTES").then(|| "10M".into());
        assert!(Config::load_from(Overrides::default(), bad).is_err());
    }

    #[test]
    fn flags_win_over_environment_which_wins_over_the_file() {
        let dir = std::env::temp_dir().join(format!("tessera-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("tessera.toml");
        std::fs::write(
            &file,
            "bind = \"0.0.0.0:1\"\npublic_url = \"https://file\"\nlog_format = \"json\"\n",
        )
        .expect("write");
        let env = |name: &str| match name {
            "TESSERA_PUBLIC_URL" => Some("https://env/".to_string()),
            "TESSERA_BIND" => Some("0.0.0.0:2".to_string()),
            _ => None,
        };
        let overrides = Overrides {
            config_file: Some(file),
            bind: Some("0.0.0.0:3".into()),
            ..Default::default()
        };
        let config = Config::load_from(overrides, env).expect("config");
        assert_eq!(config.bind, "0.0.0.0:3");
        assert_eq!(config.effective_public_url(), "https://env");
        assert_eq!(config.log_format, LogFormat::Json);
    }

    #[test]
    fn smtp_settings_come_from_the_file_and_the_environment() {
        let dir = std::env::temp_dir().join(format!("tessera-config-smtp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("tessera.toml");
        std::fs::write(
            &file,
            "smtp_host = \"mail.example.com\"\nsmtp_tls = \"tls\"\nmail_from = \"a@example.com\"\n",
        )
        .expect("write");
        let env = |name: &str| match name {
            "TESSERA_SMTP_PORT" => Some("2525".to_string()),
            "TESSERA_SMTP_USERNAME" => Some("user".to_string()),
            _ => None,
        };
        let overrides = Overrides {
            config_file: Some(file),
            ..Default::default()
        };
        let config = Config::load_from(overrides, env).expect("config");
        assert_eq!(config.smtp_host.as_deref(), Some("mail.example.com"));
        assert_eq!(config.smtp_tls, SmtpTls::Tls);
        assert_eq!(config.smtp_port, Some(2525));
        assert_eq!(config.smtp_username.as_deref(), Some("user"));
        assert_eq!(config.mail_from, "a@example.com");
        let bad = |name: &str| (name == "TESSERA_SMTP_TLS").then(|| "ssl".to_string());
        assert!(Config::load_from(Overrides::default(), bad).is_err());
    }

    #[test]
    fn metrics_settings_come_from_the_environment_and_empty_means_unset() {
        let env = |name: &str| match name {
            "TESSERA_METRICS_BIND" => Some("127.0.0.1:9464".to_string()),
            "TESSERA_METRICS_TOKEN" => Some("secret".to_string()),
            _ => None,
        };
        let config = Config::load_from(Overrides::default(), env).expect("config");
        assert_eq!(config.metrics_bind.as_deref(), Some("127.0.0.1:9464"));
        assert_eq!(config.metrics_token.as_deref(), Some("secret"));
        let empty = |name: &str| (name == "TESSERA_METRICS_BIND").then(String::new);
        let config = Config::load_from(Overrides::default(), empty).expect("config");
        assert_eq!(config.metrics_bind, None);
    }

    #[test]
    fn timeouts_come_from_the_environment_and_are_at_least_a_second() {
        let env = |name: &str| match name {
            "TESSERA_HEADER_READ_TIMEOUT_SECS" => Some("3".to_string()),
            "TESSERA_BODY_READ_TIMEOUT_SECS" => Some("0".to_string()),
            _ => None,
        };
        let config = Config::load_from(Overrides::default(), env).expect("config");
        assert_eq!(config.header_read_timeout(), Duration::from_secs(3));
        assert_eq!(config.body_read_timeout(), Duration::from_secs(1));
        let defaults = Config::default();
        assert_eq!(defaults.header_read_timeout(), Duration::from_secs(10));
        assert_eq!(defaults.body_read_timeout(), Duration::from_secs(30));
        let bad = |name: &str| (name == "TESSERA_HEADER_READ_TIMEOUT_SECS").then(|| "10s".into());
        assert!(Config::load_from(Overrides::default(), bad).is_err());
    }

    #[test]
    fn an_unknown_key_in_the_file_is_an_error() {
        let dir = std::env::temp_dir().join(format!("tessera-config-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("tessera.toml");
        std::fs::write(&file, "bnd = \"x\"\n").expect("write");
        let overrides = Overrides {
            config_file: Some(file),
            ..Default::default()
        };
        assert!(Config::load_from(overrides, |_| None).is_err());
    }
}
