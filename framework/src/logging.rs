//! Log output: text or JSON lines, filtered by `RUST_LOG` (default `info`).

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// Targets whose `info` lines say nothing an operator acts on: PostgreSQL's notices
/// ("relation ... already exists, skipping", sent while the migrations' table is made sure
/// of) and the migrator's progress. They log from `warn` on, unless `RUST_LOG` names them.
const QUIET: [&str; 2] = ["sqlx::postgres::notice", "sea_orm_migration"];

/// The filter of `RUST_LOG` (default `info`), with the [`QUIET`] targets at `warn` unless it
/// names them.
pub fn filter(rust_log: Option<&str>) -> EnvFilter {
    let spec = rust_log.filter(|s| !s.trim().is_empty()).unwrap_or("info");
    let mut directives = spec.to_owned();
    for target in QUIET.iter().filter(|t| !spec.contains(*t)) {
        directives.push_str(&format!(",{target}=warn"));
    }
    EnvFilter::try_new(&directives).unwrap_or_else(|_| EnvFilter::new("info"))
}

/// Installs the global log subscriber; a second call does nothing. Text lines are coloured
/// only when standard error is a terminal, so that files and journald get plain text.
pub fn init(format: LogFormat) {
    let rust_log = std::env::var("RUST_LOG").ok();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter(rust_log.as_deref()))
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}

/// Written in place of a secret path segment.
const REDACTED: &str = "<redacted>";

/// Path parameters of the API's route templates that carry a secret (a ticket's secret
/// in `checkinlists/{list}/positions/{secret}/redeem/`).
pub const SECRET_PARAMETERS: [&str; 1] = ["{secret}"];

/// `path` as it may be logged: every segment that carries a secret is replaced with
/// `<redacted>`. Those are the segments at `secret_segments` (indexes among the non-empty
/// segments: what the route template names with a [`SECRET_PARAMETERS`] parameter, see
/// `http::routes::RouteTable::secret_segments`), and on pages the segment after
/// `order/<code>/`, the secret that grants access to an order
/// (`/<org>/<event>/order/<code>/<secret>/pay/<id>`; any path of that shape is treated
/// alike, so that a later page under `order/<code>/` is covered too), and the token of an
/// invitation's page (`/invite/<token>`) and of a password reset
/// (`/password/reset/<token>`). Empty segments are
/// skipped as the router skips them, and a query string is kept as it is. Paths without a
/// secret are borrowed unchanged.
pub fn redact_path<'a>(path: &'a str, secret_segments: &[usize]) -> std::borrow::Cow<'a, str> {
    let end = path.find('?').unwrap_or(path.len());
    let mut segments = Vec::new();
    let mut start = 0;
    for part in path[..end].split('/') {
        if !part.is_empty() {
            segments.push(start..start + part.len());
        }
        start += part.len() + 1;
    }
    let first = |n: usize| segments.get(n).map(|s| &path[s.clone()]);
    let invite = (first(0) == Some("invite"))
        .then(|| segments.get(1).cloned())
        .flatten();
    let reset = (first(0) == Some("password") && first(1) == Some("reset"))
        .then(|| segments.get(2).cloned())
        .flatten();
    let mut secrets: Vec<_> = segments
        .windows(3)
        .filter(|w| &path[w[0].clone()] == "order")
        .map(|w| w[2].clone())
        .chain(invite)
        .chain(reset)
        .chain(
            secret_segments
                .iter()
                .filter_map(|i| segments.get(*i).cloned()),
        )
        .collect();
    if secrets.is_empty() {
        return std::borrow::Cow::Borrowed(path);
    }
    secrets.sort_by_key(|r| r.start);
    secrets.dedup();
    let mut redacted = String::with_capacity(path.len());
    let mut kept = 0;
    for secret in secrets {
        redacted.push_str(&path[kept..secret.start]);
        redacted.push_str(REDACTED);
        kept = secret.end;
    }
    redacted.push_str(&path[kept..]);
    std::borrow::Cow::Owned(redacted)
}

#[cfg(test)]
mod tests {
    use super::redact_path;

    fn redact_path_of_page(path: &str) -> std::borrow::Cow<'_, str> {
        redact_path(path, &[])
    }

    #[test]
    fn the_segments_a_route_names_as_secrets_are_redacted() {
        assert_eq!(
            redact_path(
                "/api/v1/organizers/o/events/e/checkinlists/3/positions/abc%2Fdef/redeem/",
                &[9]
            ),
            "/api/v1/organizers/o/events/e/checkinlists/3/positions/<redacted>/redeem/"
        );
        assert_eq!(
            redact_path("/a/b", &[5]),
            "/a/b",
            "a segment that is not there"
        );
    }

    #[test]
    fn the_token_of_an_invitation_page_is_redacted() {
        assert_eq!(
            redact_path_of_page("/invite/abc123?x=1"),
            "/invite/<redacted>?x=1"
        );
        assert_eq!(redact_path_of_page("/invitations/abc"), "/invitations/abc");
    }

    #[test]
    fn the_token_of_a_password_reset_is_redacted() {
        assert_eq!(
            redact_path_of_page("/password/reset/abc123"),
            "/password/reset/<redacted>"
        );
        assert_eq!(redact_path_of_page("/password/reset"), "/password/reset");
    }

    #[test]
    fn the_secret_of_an_order_page_is_redacted() {
        assert_eq!(
            redact_path_of_page("/acme/conf/order/ABC12/s3cr3t/"),
            "/acme/conf/order/ABC12/<redacted>/"
        );
        assert_eq!(
            redact_path_of_page("/acme/conf/order/ABC12/s3cr3t"),
            "/acme/conf/order/ABC12/<redacted>"
        );
    }

    #[test]
    fn the_secret_of_a_payment_page_is_redacted_and_the_rest_kept() {
        assert_eq!(
            redact_path_of_page("/acme/conf/order/ABC12/s3cr3t/pay/2/?lang=de"),
            "/acme/conf/order/ABC12/<redacted>/pay/2/?lang=de"
        );
    }

    #[test]
    fn repeated_slashes_do_not_move_the_secret_out_of_place() {
        assert_eq!(
            redact_path_of_page("//acme/conf/order//ABC12//s3cr3t//"),
            "//acme/conf/order//ABC12//<redacted>//"
        );
    }

    #[test]
    fn an_organizer_or_event_named_order_redacts_more_never_less() {
        assert_eq!(
            redact_path_of_page("/order/conf/order/ABC12/s3cr3t/"),
            "/order/conf/<redacted>/ABC12/<redacted>/"
        );
    }

    #[test]
    fn paths_without_a_secret_are_left_alone() {
        for path in [
            "/api/v1/organizers/acme/events/conf/orders/ABC12/",
            "/acme/conf/order/ABC12/",
            "/acme/conf/order/ABC12",
            "/",
            "",
            "/order?x=order/a/b",
        ] {
            assert!(
                matches!(redact_path(path, &[]), std::borrow::Cow::Borrowed(p) if p == path),
                "{path}"
            );
        }
    }
}
