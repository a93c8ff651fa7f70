//! `tessera admin outbox`: the mail outbox as an operator reads it.

use super::out;
use tessera::db::entities::outbox_mail::Model as Mail;

/// A stored instant as operators read it, in UTC to the second.
macro_rules! time {
    ($t:expr) => {
        $t.format("%Y-%m-%d %H:%M:%S UTC")
    };
}

/// One line per mail: ID, created, state, recipient, subject.
pub fn print_list(mails: &[Mail]) {
    if mails.is_empty() {
        outln!("no mails");
        return;
    }
    outln!(
        "{:>6}  {:<19}  {:<6}  {:<30}  SUBJECT",
        "ID",
        "CREATED (UTC)",
        "STATE",
        "TO"
    );
    for m in mails {
        outln!(
            "{:>6}  {}  {:<6}  {:<30}  {}",
            m.id,
            m.created.format("%Y-%m-%d %H:%M:%S"),
            m.state,
            m.to_address,
            m.subject
        );
    }
}

/// One mail: its envelope, its delivery, and its bodies.
pub fn print_mail(m: &Mail) {
    outln!("Mail {}", m.id);
    outln!("Created:  {}", time!(m.created));
    outln!("To:       {}", m.to_address);
    outln!("Subject:  {}", m.subject);
    let delivery = match (m.state.as_str(), m.sent_at) {
        ("sent", Some(at)) => format!("sent {}", time!(at)),
        ("queued", _) => format!("queued, next attempt {}", time!(m.next_attempt_at)),
        (state, _) => state.to_owned(),
    };
    outln!("State:    {delivery} ({} attempts)", m.attempts);
    if let Some(error) = &m.last_error {
        outln!("Error:    {error}");
    }
    outln!("\n{}", m.body_text);
    if let Some(html) = &m.body_html {
        outln!("\n--- HTML ---\n{html}");
    }
}
