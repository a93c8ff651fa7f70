//! Log output: text or JSON lines, filtered by `RUST_LOG` (default `info`).

use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// Installs the global log subscriber; a second call does nothing.
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}

/// Written in place of a secret path segment.
const REDACTED: &str = "<redacted>";

/// `path` as it may be logged: the segment after `order/<code>/` is replaced with
/// `<redacted>`, as it is the secret that grants access to the order
/// (`/<org>/<event>/order/<code>/<secret>/pay/<id>`); any path of that shape is treated alike,
/// so that a later page under `order/<code>/` is covered too. Empty segments are skipped as
/// the router skips them, and a query string is kept as it is. Paths without a secret are
/// borrowed unchanged.
pub fn redact_path(path: &str) -> std::borrow::Cow<'_, str> {
    let end = path.find('?').unwrap_or(path.len());
    let mut segments = Vec::new();
    let mut start = 0;
    for part in path[..end].split('/') {
        if !part.is_empty() {
            segments.push(start..start + part.len());
        }
        start += part.len() + 1;
    }
    // Windows start in order, so the secrets' ranges come out in order and never overlap.
    let secrets: Vec<_> = segments
        .windows(3)
        .filter(|w| &path[w[0].clone()] == "order")
        .map(|w| w[2].clone())
        .collect();
    if secrets.is_empty() {
        return std::borrow::Cow::Borrowed(path);
    }
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

    #[test]
    fn the_secret_of_an_order_page_is_redacted() {
        assert_eq!(
            redact_path("/acme/conf/order/ABC12/s3cr3t/"),
            "/acme/conf/order/ABC12/<redacted>/"
        );
        assert_eq!(
            redact_path("/acme/conf/order/ABC12/s3cr3t"),
            "/acme/conf/order/ABC12/<redacted>"
        );
    }

    #[test]
    fn the_secret_of_a_payment_page_is_redacted_and_the_rest_kept() {
        assert_eq!(
            redact_path("/acme/conf/order/ABC12/s3cr3t/pay/2/?lang=de"),
            "/acme/conf/order/ABC12/<redacted>/pay/2/?lang=de"
        );
    }

    #[test]
    fn repeated_slashes_do_not_move_the_secret_out_of_place() {
        assert_eq!(
            redact_path("//acme/conf/order//ABC12//s3cr3t//"),
            "//acme/conf/order//ABC12//<redacted>//"
        );
    }

    #[test]
    fn an_organizer_or_event_named_order_redacts_more_never_less() {
        assert_eq!(
            redact_path("/order/conf/order/ABC12/s3cr3t/"),
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
                matches!(redact_path(path), std::borrow::Cow::Borrowed(p) if p == path),
                "{path}"
            );
        }
    }
}
