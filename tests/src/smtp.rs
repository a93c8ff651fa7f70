//! A minimal SMTP server on a local port that records what it is sent: enough of the
//! protocol for a client without TLS or authentication. It can refuse mail (451), and be
//! told to accept again.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

/// One message as received.
#[derive(Debug, Clone, Default)]
pub struct Received {
    /// The `MAIL FROM` argument.
    pub from: String,
    /// The `RCPT TO` arguments.
    pub to: Vec<String>,
    /// The message data, headers and body, with CRLF line ends, without the final dot.
    pub data: String,
}

#[derive(Default)]
struct Shared {
    received: Mutex<Vec<Received>>,
    refusing: AtomicBool,
}

/// A running SMTP sink; it stops with the test's runtime.
pub struct SmtpSink {
    /// The port it listens on, at 127.0.0.1.
    pub port: u16,
    shared: Arc<Shared>,
}

impl SmtpSink {
    /// Starts a sink that accepts every message.
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let shared = Arc::new(Shared::default());
        let accepting = shared.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(converse(stream, accepting.clone()));
            }
        });
        Self { port, shared }
    }

    /// From now on, answers `MAIL FROM` with 451 (try again later), or accepts again.
    pub fn refuse(&self, refusing: bool) {
        self.shared.refusing.store(refusing, Ordering::SeqCst);
    }

    /// The messages received so far.
    pub fn received(&self) -> Vec<Received> {
        self.shared.received.lock().expect("lock").clone()
    }

    /// Waits up to `seconds` for at least `n` messages, and gives what was received.
    pub async fn wait_for(&self, n: usize, seconds: u64) -> Vec<Received> {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(seconds);
        while self.received().len() < n && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        self.received()
    }
}

async fn converse(stream: TcpStream, shared: Arc<Shared>) {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    let mut current = Received::default();
    if write.write_all(b"220 sink ESMTP\r\n").await.is_err() {
        return;
    }
    while let Ok(Some(line)) = lines.next_line().await {
        let verb = line.get(..4).unwrap_or(&line).to_ascii_uppercase();
        let reply: &[u8] = match verb.as_str() {
            "EHLO" | "HELO" => b"250 sink\r\n",
            "MAIL" if shared.refusing.load(Ordering::SeqCst) => b"451 try again later\r\n",
            "MAIL" => {
                current = Received {
                    from: line.get(10..).unwrap_or_default().trim().to_owned(),
                    ..Received::default()
                };
                b"250 OK\r\n"
            }
            "RCPT" => {
                current
                    .to
                    .push(line.get(8..).unwrap_or_default().trim().to_owned());
                b"250 OK\r\n"
            }
            "DATA" => {
                if write.write_all(b"354 go ahead\r\n").await.is_err() {
                    return;
                }
                while let Ok(Some(data)) = lines.next_line().await {
                    if data == "." {
                        break;
                    }
                    // Dot-stuffing: a line starting with a dot was sent with two.
                    current
                        .data
                        .push_str(data.strip_prefix('.').unwrap_or(&data));
                    current.data.push_str("\r\n");
                }
                shared
                    .received
                    .lock()
                    .expect("lock")
                    .push(std::mem::take(&mut current));
                b"250 queued\r\n"
            }
            "RSET" | "NOOP" => b"250 OK\r\n",
            "QUIT" => {
                let _ = write.write_all(b"221 bye\r\n").await;
                return;
            }
            _ => b"502 not implemented\r\n",
        };
        if write.write_all(reply).await.is_err() {
            return;
        }
    }
}
