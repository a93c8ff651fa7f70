//! The SMTP side of the mailer: a connection pool to the configured server, and the
//! conversion of an outbox row into a message.

use std::sync::OnceLock;
use std::time::Duration;

use lettre::message::header::ContentType;
use lettre::message::{Mailbox, MultiPart, SinglePart};
use lettre::transport::smtp::AsyncSmtpTransportBuilder;
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use super::Attachment;
use crate::config::{Config, SmtpTls};
use crate::db::entities::outbox_mail;

/// How long one SMTP conversation may take before the attempt counts as failed.
const SMTP_TIMEOUT: Duration = Duration::from_secs(30);

/// SMTP settings that cannot work.
#[derive(Debug, thiserror::Error)]
pub enum MailConfigError {
    /// `mail_from` is not an address.
    #[error("mail_from {0:?} is not a mail address")]
    From(String),
    /// The TLS settings for `smtp_host` could not be built.
    #[error("smtp_host {host:?}: {message}")]
    Tls {
        /// The host.
        host: String,
        /// What went wrong.
        message: String,
    },
}

/// Why one mail could not be sent.
#[derive(Debug)]
pub(super) enum SendError {
    /// It never will be: its address or content is malformed.
    Undeliverable(String),
    /// It may be later: the server refused or could not be reached.
    Retry(String),
}

/// A configured SMTP server and the sender address. The connection pool is made on first
/// use, on the runtime that sends (making it starts a task).
pub(super) struct Smtp {
    builder: AsyncSmtpTransportBuilder,
    transport: OnceLock<AsyncSmtpTransport<Tokio1Executor>>,
    from: Mailbox,
}

impl Smtp {
    /// The configured server, or `None` when `smtp_host` is not set.
    pub(super) fn from_config(config: &Config) -> Result<Option<Self>, MailConfigError> {
        let Some(host) = config.smtp_host.as_deref() else {
            return Ok(None);
        };
        let from = config
            .mail_from
            .parse()
            .map_err(|_| MailConfigError::From(config.mail_from.clone()))?;
        let tls = tls(config.smtp_tls, host)?;
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(host)
            .port(config.smtp_port.unwrap_or(config.smtp_tls.default_port()))
            .tls(tls)
            .timeout(Some(SMTP_TIMEOUT));
        if let (Some(user), Some(password)) = (&config.smtp_username, &config.smtp_password) {
            builder = builder.credentials(Credentials::new(user.clone(), password.clone()));
        }
        Ok(Some(Self {
            builder,
            transport: OnceLock::new(),
            from,
        }))
    }

    /// Sends one mail of the outbox, with these files.
    pub(super) async fn send(
        &self,
        mail: &outbox_mail::Model,
        files: Vec<Attachment>,
    ) -> Result<(), SendError> {
        let message = self.message(mail, files)?;
        self.transport
            .get_or_init(|| self.builder.clone().build())
            .send(message)
            .await
            .map(drop)
            .map_err(|e| SendError::Retry(e.to_string()))
    }

    fn message(
        &self,
        mail: &outbox_mail::Model,
        files: Vec<Attachment>,
    ) -> Result<Message, SendError> {
        let to: Mailbox = mail.to_address.parse().map_err(|_| {
            SendError::Undeliverable(format!("{:?} is not a mail address", mail.to_address))
        })?;
        let builder = Message::builder()
            .message_id(Some(message_id(mail, &self.from)))
            .from(self.from.clone())
            .to(to)
            .subject(mail.subject.clone());
        let text = mail.body_text.clone();
        let built = match (&mail.body_html, files.is_empty()) {
            (Some(html), true) => {
                builder.multipart(MultiPart::alternative_plain_html(text, html.clone()))
            }
            (None, true) => builder.singlepart(SinglePart::plain(text)),
            (html, false) => {
                let body = match html {
                    Some(html) => MultiPart::mixed()
                        .multipart(MultiPart::alternative_plain_html(text, html.clone())),
                    None => MultiPart::mixed().singlepart(SinglePart::plain(text)),
                };
                let mixed = files
                    .into_iter()
                    .fold(body, |parts, file| parts.singlepart(attachment(file)));
                builder.multipart(mixed)
            }
        };
        built.map_err(|e| SendError::Undeliverable(e.to_string()))
    }
}

/// A file as a part of a message; a media type that cannot be read is sent as bytes.
fn attachment(file: Attachment) -> SinglePart {
    let content_type = ContentType::parse(&file.content_type)
        .unwrap_or_else(|_| ContentType::parse("application/octet-stream").expect("known type"));
    lettre::message::Attachment::new(file.file_name).body(file.data, content_type)
}

/// The `Message-ID` of an outbox mail, the same at every attempt:
/// `<{outbox id}.{queued, in microseconds since the epoch}@{the sender's domain}>`.
fn message_id(mail: &outbox_mail::Model, from: &Mailbox) -> String {
    format!(
        "<{}.{}@{}>",
        mail.id,
        mail.created.timestamp_micros(),
        from.email.domain()
    )
}

fn tls(mode: SmtpTls, host: &str) -> Result<Tls, MailConfigError> {
    let parameters = || {
        TlsParameters::new(host.to_owned()).map_err(|e| MailConfigError::Tls {
            host: host.to_owned(),
            message: e.to_string(),
        })
    };
    Ok(match mode {
        SmtpTls::None => Tls::None,
        SmtpTls::Starttls => Tls::Required(parameters()?),
        SmtpTls::Tls => Tls::Wrapper(parameters()?),
    })
}
