//! `tessera` as a process: admin commands and `tessera serve` on a loopback port, for tests
//! that need what only a real process shows (two processes on one database, a crash).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// The workspace's root directory.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A tool `.ci/setup` installs, at `path` in the workspace, or `None` when it is missing:
/// the calling test is then skipped with one line, unless the environment variable
/// `required_by` is `required` (as `.ci/run` sets it), where it fails. `what` names what
/// `.ci/setup` would install. With `required_by` set to `skip` the test is skipped even when
/// the tool is there: `.ci/run` runs each slow tool test on one database only.
pub fn installed_tool(path: &str, required_by: &str, what: &str) -> Option<PathBuf> {
    if std::env::var(required_by).is_ok_and(|v| v == "skip") {
        println!("skipped: {required_by}=skip");
        return None;
    }
    let path = workspace().join(path);
    if path.exists() {
        return Some(path);
    }
    let required = std::env::var(required_by).is_ok_and(|v| v == "required");
    assert!(
        !required,
        "{} missing and {required_by}=required: run .ci/setup to install {what}",
        path.display()
    );
    println!(
        "skipped: {} missing (run .ci/setup to install {what})",
        path.display()
    );
    None
}

/// A free loopback port, at the time of asking.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// Runs `tessera <args> --database-url <url>` (an admin command with `--create-database`,
/// as a test's database starts empty) and gives its standard output; panics with its
/// standard error when it fails.
pub fn admin(bin: &Path, url: &str, args: &[&str]) -> String {
    let create: &[&str] = if args.first() == Some(&"admin") {
        &["--create-database"]
    } else {
        &[]
    };
    let out: Output = Command::new(bin)
        .args(args)
        .args(["--database-url", url])
        .args(create)
        .output()
        .expect("run tessera");
    assert!(
        out.status.success(),
        "tessera {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Creates the organizer `slug` with `tessera admin`, and a token of a team of it with every
/// permission; gives the `Authorization` header that carries the token.
pub fn organizer_with_admin_token(bin: &Path, url: &str, slug: &str) -> String {
    admin(
        bin,
        url,
        &["admin", "create-organizer", "--slug", slug, "--name", slug],
    );
    let out = admin(
        bin,
        url,
        &[
            "admin",
            "create-token",
            "--organizer",
            slug,
            "--all-permissions",
        ],
    );
    format!("Token {}", out.lines().last().unwrap_or_default().trim())
}

/// A `tessera serve` on a fixed loopback port (kept across restarts), its standard error in
/// a log file; killed when dropped.
pub struct Server {
    bin: PathBuf,
    url: String,
    bind: String,
    log: PathBuf,
    env: Vec<(String, String)>,
    child: Option<Child>,
    /// The log's directory, when the server made its own.
    _dir: Option<tempfile::TempDir>,
}

impl Server {
    /// A server of the binary `bin` on the database `url`, logging to `<dir>/<name>.log`;
    /// not started yet.
    pub fn new(bin: &Path, url: &str, dir: &Path, name: &str) -> Self {
        Self {
            bin: bin.to_owned(),
            url: url.to_owned(),
            bind: format!("127.0.0.1:{}", free_port()),
            log: dir.join(format!("{name}.log")),
            // Every request of a test comes from one loopback address, hundreds at once in
            // the races: the per-address cap is for clients, not for a test driving a node.
            env: vec![("TESSERA_MAX_CONNECTIONS_PER_ADDRESS".into(), "4096".into())],
            child: None,
            _dir: None,
        }
    }

    /// A server of the binary `bin` on the database `url`, logging into a temporary
    /// directory of its own; not started yet.
    pub fn new_logging_aside(bin: &Path, url: &str) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut server = Self::new(bin, url, dir.path(), "serve");
        server._dir = Some(dir);
        server
    }

    /// Sets an environment variable for the next starts.
    pub fn env(&mut self, key: &str, value: &str) -> &mut Self {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_owned(), value.to_owned()));
        self
    }

    /// Removes an environment variable for the next starts.
    pub fn unset(&mut self, key: &str) -> &mut Self {
        self.env.retain(|(k, _)| k != key);
        self
    }

    /// The base URL, `http://127.0.0.1:<port>`.
    pub fn base(&self) -> String {
        format!("http://{}", self.bind)
    }

    /// Starts the process (again) and waits until it answers `/healthz`.
    pub async fn start(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .expect("log file");
        let child = Command::new(&self.bin)
            .args(["serve", "--bind", &self.bind, "--database-url", &self.url])
            .env("RUST_LOG", "warn")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("spawn tessera serve");
        self.child = Some(child);
        let client = reqwest::Client::new();
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(30) {
            let probe = client.get(format!("{}/healthz", self.base())).send().await;
            if probe.is_ok_and(|r| r.status().is_success()) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!("tessera serve did not start: {}", self.log_text());
    }

    /// Kills the process with SIGKILL and reaps it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().expect("SIGKILL");
            child.wait().expect("reap");
        }
    }

    /// The process ID, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Waits until the process ends by itself (at most 30 seconds); its exit status, or
    /// `None` when it is still running (or was not).
    pub async fn wait_for_exit(&mut self) -> Option<ExitStatus> {
        let child = self.child.as_mut()?;
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(30) {
            if let Some(status) = child.try_wait().expect("try_wait") {
                self.child = None;
                return Some(status);
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        None
    }

    /// What the process wrote to standard error so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Two `tessera serve` processes on one database, started, their output set aside.
pub async fn started_pair(bin: &Path, url: &str) -> [Server; 2] {
    let mut nodes = [
        Server::new_logging_aside(bin, url),
        Server::new_logging_aside(bin, url),
    ];
    for node in &mut nodes {
        node.start().await;
    }
    nodes
}
