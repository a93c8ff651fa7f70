//! Command-line interface: `serve`, `migrate`, `openapi`, `demo` and `admin ...`.

/// Writes a line to stdout; a closed pipe (`tessera openapi | head`) is not an error.
macro_rules! outln {
    ($($arg:tt)*) => { out(&format!("{}\n", format_args!($($arg)*))) };
}

mod outbox;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use tessera::admin::{self, TokenRequest, UserRequest};
use tessera::config::Overrides;
use tessera::db::DatabaseConnection;
use tessera::domain::permissions::{Permission, PermissionSet};
use tessera::{App, Config};

/// Tessera: an event-ticketing back end with pretix's JSON API.
#[derive(Parser, Debug)]
#[command(name = "tessera", version)]
pub struct Cli {
    /// TOML configuration file (also `TESSERA_CONFIG`).
    #[arg(long, global = true, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Debug, Default)]
struct DbArgs {
    /// Database URL, `sqlite://...` or `postgres://...` (also `TESSERA_DATABASE_URL`).
    #[arg(long, value_name = "URL")]
    database_url: Option<String>,
}

#[derive(Args, Debug, Default)]
struct AdminDbArgs {
    /// Database URL, `sqlite://...` or `postgres://...` (also `TESSERA_DATABASE_URL`).
    #[arg(long, value_name = "URL", global = true)]
    database_url: Option<String>,
    /// Create and migrate the database when it does not exist yet; without it, a command
    /// refuses a database that is not there.
    #[arg(long, global = true)]
    create_database: bool,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the HTTP service (migrates the database first).
    Serve {
        /// Address to listen on (default 127.0.0.1:8000; also `TESSERA_BIND`).
        #[arg(long, value_name = "ADDR")]
        bind: Option<String>,
        #[command(flatten)]
        db: DbArgs,
        /// Directory for the SQLite database (default ./data; also `TESSERA_DATA_DIR`).
        #[arg(long, value_name = "DIR")]
        data_dir: Option<PathBuf>,
    },
    /// Bring the database schema up to date.
    Migrate {
        #[command(flatten)]
        db: DbArgs,
    },
    /// Print the OpenAPI document (JSON).
    Openapi,
    /// Seed demo data if missing, print a token and example requests, then serve.
    Demo {
        /// Address to listen on.
        #[arg(long, value_name = "ADDR")]
        bind: Option<String>,
        #[command(flatten)]
        db: DbArgs,
    },
    /// Operator tasks, on the database of the service's configuration (`--config` or
    /// `TESSERA_CONFIG`, else /etc/tessera/tessera.toml when it exists; the environment).
    Admin {
        #[command(flatten)]
        db: AdminDbArgs,
        #[command(subcommand)]
        task: AdminTask,
    },
}

#[derive(Subcommand, Debug)]
enum AdminTask {
    /// Create an organizer.
    CreateOrganizer {
        /// Short name used in URLs.
        #[arg(long)]
        slug: String,
        /// Display name.
        #[arg(long)]
        name: String,
    },
    /// Create an API token for a team (the team is created when missing); prints what the
    /// team may do, then the token alone on the last line. Say what the team may do:
    /// --all-permissions, --permission (repeatable) or, for an existing team,
    /// --keep-permissions.
    #[command(group(clap::ArgGroup::new("access").required(true).multiple(true)
        .args(["all_permissions", "permission", "keep_permissions"])))]
    CreateToken {
        /// Organizer slug.
        #[arg(long)]
        organizer: String,
        /// Team name.
        #[arg(long, default_value = "api")]
        team: String,
        /// Give the team every permission.
        #[arg(long, conflicts_with_all = ["permission", "keep_permissions"])]
        all_permissions: bool,
        /// Give the team this permission (repeatable), e.g. can_manage_gift_cards.
        #[arg(long, value_name = "PERM", conflicts_with = "keep_permissions")]
        permission: Vec<String>,
        /// The team exists: leave its permissions as they are.
        #[arg(long)]
        keep_permissions: bool,
        /// Limit the team to this event (repeatable); without it the team has all events.
        #[arg(long, value_name = "SLUG")]
        event: Vec<String>,
    },
    /// Set up an installation: create the first organizer, its administrator (a user who
    /// signs in with the password) in a team with every permission, and an API token of
    /// that team; prints what to do next, and the token alone on the last line.
    Bootstrap {
        /// The organizer's slug (its URLs' name), e.g. acme.
        #[arg(long)]
        organizer: String,
        /// The organizer's display name.
        #[arg(long)]
        organizer_name: String,
        /// The administrator's email address.
        #[arg(long)]
        email: String,
        /// The administrator's full name.
        #[arg(long, default_value = "")]
        fullname: String,
        /// Read the administrator's password from the first line of standard input
        /// (otherwise one is generated and printed).
        #[arg(long)]
        password_stdin: bool,
    },
    /// Give a user a new password (ending every session they have): read from the first
    /// line of standard input with --password-stdin, otherwise generated and printed alone
    /// on the last line.
    SetPassword {
        /// The user's email address.
        #[arg(long)]
        email: String,
        /// Read the password from the first line of standard input.
        #[arg(long)]
        password_stdin: bool,
    },
    /// Copy a SQLite database, consistent at one moment, while the service runs; for
    /// PostgreSQL, prints the pg_dump command to use instead.
    Backup {
        /// The new file to write the copy to.
        #[arg(long, value_name = "FILE")]
        to: PathBuf,
    },
    /// Create a user who signs in with email and password, optionally in a team of an
    /// organizer (the team is created without permissions when missing).
    CreateUser {
        /// Email address.
        #[arg(long)]
        email: String,
        /// Password (at least 8 characters).
        #[arg(long)]
        password: String,
        /// Full name.
        #[arg(long, default_value = "")]
        fullname: String,
        /// Make the user staff of the service.
        #[arg(long)]
        staff: bool,
        /// Organizer slug of the team to join (with --team).
        #[arg(long, value_name = "SLUG", requires = "team")]
        organizer: Option<String>,
        /// Team name to join (with --organizer).
        #[arg(long, value_name = "NAME", requires = "organizer")]
        team: Option<String>,
    },
    /// Register an OAuth application; prints `{"client_id": ..., "client_secret": ...}`
    /// alone on the last line (the secret is shown only now).
    CreateOauthApp {
        /// The application's name, shown to people asked to grant it access.
        #[arg(long)]
        name: String,
        /// An allowed redirect URI (repeatable; the first is the default).
        #[arg(long = "redirect-uri", value_name = "URI", required = true)]
        redirect_uri: Vec<String>,
        /// Email of the user who manages the application on their account page.
        #[arg(long, value_name = "EMAIL")]
        user: Option<String>,
    },
    /// Create a reseller account; prints `{"id": ..., "name": ...}` alone on the last line.
    CreateReseller {
        /// Internal name.
        #[arg(long)]
        name: String,
        /// Email of a user permitted on the account (repeatable).
        #[arg(long, value_name = "EMAIL")]
        user: Vec<String>,
    },
    /// List the mail outbox, newest first, or show one mail.
    Outbox {
        /// Only mails in this state: queued, sent or failed.
        #[arg(long, value_name = "STATE")]
        state: Option<String>,
        /// Show this mail with its body instead of the list.
        #[arg(long, value_name = "ID", conflicts_with = "state")]
        show: Option<i64>,
        /// List at most this many mails.
        #[arg(long, value_name = "N", default_value_t = 100)]
        limit: u64,
    },
    /// Switch the talk side (`/api/events/{slug}/`) of an event on or off. Switching it on
    /// needs a slug no other organizer's event on the talk side has.
    #[command(group(clap::ArgGroup::new("switch").required(true).args(["on", "off"])))]
    EventTalk {
        /// Organizer slug.
        #[arg(long)]
        organizer: String,
        /// Event slug.
        #[arg(long)]
        event: String,
        /// Switch the talk side on.
        #[arg(long)]
        on: bool,
        /// Switch the talk side off.
        #[arg(long)]
        off: bool,
    },
    /// Create a talk-side API token (`/api/`) for a user, reading every endpoint (or, with
    /// --write, reading and writing); prints the token alone on the last line. Input the
    /// command refuses (unknown user or event, bad expiry) exits with code 2.
    CreateUserToken {
        /// Email of the user the token acts for.
        #[arg(long)]
        email: String,
        /// The token's name.
        #[arg(long, default_value = "cli")]
        name: String,
        /// Read and write every endpoint (default: read only).
        #[arg(long)]
        write: bool,
        /// Limit the token to this talk-enabled event of the user's teams (repeatable);
        /// without it the token has all events.
        #[arg(long, value_name = "SLUG")]
        event: Vec<String>,
        /// When the token stops working, e.g. 2030-01-31T18:00:00Z or "2030-01-31 18:00"
        /// (UTC).
        #[arg(long, value_name = "DATETIME")]
        expires: Option<String>,
    },
    /// Create a scanning device: prints the QR code a scanner app reads to initialize,
    /// then its content (JSON) and the single-use initialization token alone on the last
    /// line. Input the command refuses (unknown organizer, event or profile) exits with
    /// code 2.
    CreateDevice {
        /// Organizer slug.
        #[arg(long)]
        organizer: String,
        /// Device name.
        #[arg(long)]
        name: String,
        /// Limit the device to this event (repeatable); without it the device has all
        /// events.
        #[arg(long, value_name = "SLUG")]
        event: Vec<String>,
        /// Security profile: full (default), service_checkin, service_checkin_online_kiosk,
        /// or pretix's pretixscan, pretixscan_online_noorders, pretixscan_online_kiosk.
        #[arg(long, value_name = "PROFILE")]
        profile: Option<String>,
        /// The address scanners reach the service at, for the QR code (default: the
        /// configuration's public_url, which the command otherwise requires).
        #[arg(long, value_name = "URL")]
        public_url: Option<String>,
    },
    /// Let an organizer accept the gift cards of an issuer.
    AcceptGiftcards {
        /// The accepting organizer's slug.
        #[arg(long)]
        organizer: String,
        /// The issuing organizer's slug.
        #[arg(long)]
        issuer: String,
    },
}

/// Parses the command line; on a usage error prints one line and gives the exit code.
pub fn parse() -> Result<Cli, ExitCode> {
    Cli::try_parse().map_err(|err| {
        if matches!(
            err.kind(),
            clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion
        ) {
            let _ = err.print();
            return ExitCode::SUCCESS;
        }
        // The first paragraph, on one line: "the following required arguments were not
        // provided:" is followed by their names.
        let rendered = err.render().to_string();
        let first: Vec<&str> = rendered
            .lines()
            .map(str::trim)
            .take_while(|l| !l.is_empty())
            .collect();
        let line = first.join(" ");
        eprintln!(
            "{}",
            if line.is_empty() {
                "error: invalid arguments"
            } else {
                &line
            }
        );
        ExitCode::from(2)
    })
}

fn load_config(
    file: Option<PathBuf>,
    bind: Option<String>,
    db: DbArgs,
    data_dir: Option<PathBuf>,
) -> Result<Config, String> {
    let overrides = Overrides {
        config_file: file,
        bind,
        database_url: db.database_url,
        data_dir,
    };
    Config::load(overrides).map_err(|e| e.to_string())
}

async fn connect(config: &Config) -> Result<DatabaseConnection, String> {
    tessera::db::connect_migrated(&config.effective_database_url(), config.db_max_connections)
        .await
        .map_err(|e| format!("database: {}", tessera::db::describe(&e)))
}

fn permissions(all: bool, names: &[String]) -> Result<PermissionSet, Failure> {
    if all {
        return Ok(PermissionSet::all());
    }
    names
        .iter()
        .map(|n| {
            Permission::from_name(n).ok_or_else(|| {
                let valid: Vec<&str> = Permission::ALL.iter().map(|p| p.name()).collect();
                Failure {
                    message: format!("unknown permission {n:?}; valid: {}", valid.join(", ")),
                    code: 2,
                }
            })
        })
        .collect()
}

/// A command that failed: the message for stderr and the exit code (2 for input a command
/// refuses where it says so, as for usage errors; 1 otherwise).
#[derive(Debug)]
pub struct Failure {
    /// One line saying what went wrong.
    pub message: String,
    /// The process's exit code.
    pub code: u8,
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Self { message, code: 1 }
    }
}

/// Runs a command; `plugins` adds the binary's compiled-in plugins to an app.
pub async fn run(cli: Cli, plugins: fn(App) -> App) -> Result<(), Failure> {
    match cli.command {
        Command::Serve { bind, db, data_dir } => {
            let config = load_config(cli.config, bind, db, data_dir)?;
            tessera::logging::init(config.log_format);
            let server = plugins(App::new(config))
                .build()
                .await
                .map_err(|e| e.to_string())?;
            Ok(server.run().await.map_err(|e| e.to_string())?)
        }
        Command::Migrate { db } => {
            let config = load_config(cli.config, None, db, None)?;
            connect(&config).await?;
            let url = config.effective_database_url();
            outln!("{} is up to date", tessera::db::describe_url(&url));
            Ok(())
        }
        Command::Openapi => {
            out(&plugins(App::new(Config::default())).openapi_json());
            Ok(())
        }
        Command::Demo { bind, db } => {
            let config = load_config(cli.config, bind, db, None)?;
            tessera::logging::init(config.log_format);
            let server = plugins(App::new(config))
                .build()
                .await
                .map_err(|e| e.to_string())?;
            let seed = admin::seed_demo(server.state())
                .await
                .map_err(|e| e.to_string())?;
            print_demo(&server.state().public_url, &seed);
            Ok(server.run().await.map_err(|e| e.to_string())?)
        }
        Command::Admin { db, task } => run_admin(cli.config, db, task).await,
    }
}

/// A refusal of input (exit code 2), or a failure.
fn refused(e: admin::AdminError) -> Failure {
    match e {
        admin::AdminError::Invalid(message) => Failure { message, code: 2 },
        other => Failure::from(other.to_string()),
    }
}

/// Opens the configuration's database for an operator command, saying on stderr which one.
async fn admin_database(config: &Config, create: bool) -> Result<DatabaseConnection, Failure> {
    let url = config.effective_database_url();
    eprintln!("using {}", tessera::db::describe_url(&url));
    admin::open(&url, create).await.map_err(refused)
}

/// A password from the first line of standard input, or a new random one (then printed).
fn password(from_stdin: bool) -> Result<(String, bool), Failure> {
    if !from_stdin {
        return Ok((tessera::domain::tokens::generate()[..20].to_owned(), true));
    }
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|e| Failure::from(format!("reading the password: {e}")))?;
    Ok((line.trim_end_matches(['\r', '\n']).to_owned(), false))
}

async fn run_admin(
    file: Option<PathBuf>,
    args: AdminDbArgs,
    task: AdminTask,
) -> Result<(), Failure> {
    let db_args = DbArgs {
        database_url: args.database_url,
    };
    let file = file.or_else(|| {
        let default = PathBuf::from(tessera::config::DEFAULT_FILE);
        (std::env::var_os("TESSERA_CONFIG").is_none() && default.exists()).then_some(default)
    });
    let config = load_config(file, None, db_args, None)?;
    let db = admin_database(&config, args.create_database).await?;
    match task {
        AdminTask::CreateOrganizer { slug, name } => {
            let org = admin::create_organizer(&db, &slug, &name)
                .await
                .map_err(refused)?;
            outln!("created organizer {} (id {})", org.slug, org.id);
        }
        AdminTask::CreateToken {
            organizer,
            team,
            all_permissions,
            permission,
            keep_permissions,
            event,
        } => {
            let permissions = match keep_permissions {
                true => None,
                false => Some(permissions(all_permissions, &permission)?),
            };
            let request = TokenRequest {
                organizer,
                team,
                permissions,
                events: event,
            };
            let created = admin::create_token(&db, &request).await.map_err(refused)?;
            outln!("{}", created.summary);
            outln!("{}", created.token);
        }
        AdminTask::Bootstrap {
            organizer,
            organizer_name,
            email,
            fullname,
            password_stdin,
        } => {
            let (password, generated) = password(password_stdin)?;
            let request = admin::Bootstrap {
                organizer,
                organizer_name,
                email,
                password: password.clone(),
                fullname,
            };
            let made = admin::bootstrap(&db, &request).await.map_err(refused)?;
            print_bootstrapped(
                &config.effective_public_url(),
                &made,
                generated.then_some(&password),
            );
        }
        AdminTask::SetPassword {
            email,
            password_stdin,
        } => {
            let (password, generated) = password(password_stdin)?;
            let user = admin::set_password(&db, &email, password.clone())
                .await
                .map_err(refused)?;
            outln!(
                "set a new password for {}; their sessions ended",
                user.email
            );
            if generated {
                outln!("{password}");
            }
        }
        AdminTask::Backup { to } => {
            admin::backup(&db, &config.effective_database_url(), &to)
                .await
                .map_err(refused)?;
            outln!("wrote a copy of the database to {}", to.display());
        }
        AdminTask::CreateUser {
            email,
            password,
            fullname,
            staff,
            organizer,
            team,
        } => {
            let request = UserRequest {
                email,
                password,
                fullname,
                is_staff: staff,
                team: organizer.zip(team),
            };
            let user = admin::create_user(&db, &request).await.map_err(refused)?;
            outln!("created user {} (id {})", user.email, user.id);
        }
        AdminTask::CreateOauthApp {
            name,
            redirect_uri,
            user,
        } => {
            let (client_id, client_secret) =
                admin::create_oauth_app(&db, &name, &redirect_uri, user.as_deref())
                    .await
                    .map_err(refused)?;
            outln!("created OAuth application {name:?}");
            outln!(
                "{}",
                serde_json::json!({"client_id": client_id, "client_secret": client_secret})
            );
        }
        AdminTask::CreateReseller { name, user } => {
            let account = admin::create_reseller(&db, &name, &user)
                .await
                .map_err(refused)?;
            outln!(
                "{}",
                serde_json::json!({"id": account.id, "name": account.name})
            );
        }
        AdminTask::EventTalk {
            organizer,
            event,
            on,
            off: _,
        } => {
            admin::set_event_talk(&db, &organizer, &event, on)
                .await
                .map_err(refused)?;
            let state = if on { "on" } else { "off" };
            outln!("the talk side of {organizer}/{event} is {state}");
        }
        AdminTask::CreateUserToken {
            email,
            name,
            write,
            event,
            expires,
        } => {
            let request = admin::UserTokenRequest {
                email,
                name,
                write,
                events: event,
                expires,
            };
            let token = admin::create_user_token(&db, &request)
                .await
                .map_err(refused)?;
            let access = if write { "read-write" } else { "read-only" };
            outln!("created a {access} API token for {}", request.email);
            outln!("{token}");
        }
        AdminTask::CreateDevice {
            organizer,
            name,
            event,
            profile,
            public_url,
        } => {
            let base = public_url
                .or_else(|| config.public_url.clone())
                .ok_or_else(|| Failure {
                    message: "the QR code needs the address scanners reach the service at: \
                              set public_url in the configuration (or TESSERA_PUBLIC_URL), or \
                              pass --public-url"
                        .into(),
                    code: 2,
                })?;
            let request = admin::DeviceRequest {
                organizer,
                name,
                events: event,
                profile,
            };
            let created = admin::create_device(&db, base.trim_end_matches('/'), &request)
                .await
                .map_err(refused)?;
            let payload = created.payload.to_string();
            outln!("{}", admin::terminal_qr(&payload).map_err(refused)?);
            outln!(
                "created device {} of {}; scan the code, or initialize with:",
                created.device_id,
                request.organizer
            );
            outln!("{payload}");
            outln!("{}", created.token);
        }
        AdminTask::AcceptGiftcards { organizer, issuer } => {
            admin::accept_giftcards(&db, &organizer, &issuer)
                .await
                .map_err(refused)?;
            outln!("{organizer} now accepts gift cards issued by {issuer}");
        }
        AdminTask::Outbox { state, show, limit } => {
            show_outbox(&db, state.as_deref(), show, limit).await?;
        }
    }
    Ok(())
}

/// What `admin bootstrap` made, and the next steps.
fn print_bootstrapped(base: &str, made: &admin::Bootstrapped, password: Option<&String>) {
    let org = &made.organizer.slug;
    outln!(
        "created organizer {org} and its administrator {} in the team {:?} (every permission, all events)",
        made.user.email,
        made.team
    );
    if let Some(password) = password {
        outln!("their password (shown once): {password}");
    }
    outln!("\nNext:");
    outln!("  sign in at {base}/account (change the password there)");
    outln!("  create the first event with the API token below (shown once):");
    outln!(
        "  curl -H 'Authorization: Token <token>' -H 'Content-Type: application/json' \\\n       -d '{{\"name\": {{\"en\": \"My event\"}}, \"slug\": \"my-event\", \"currency\": \"EUR\", \"date_from\": \"2030-06-01T09:00:00Z\"}}' \\\n       {base}/api/v1/organizers/{org}/events/"
    );
    outln!("  more in docs/deployment.md, \"The first sale\"\n");
    outln!("{}", made.token);
}

async fn show_outbox(
    db: &DatabaseConnection,
    state: Option<&str>,
    show: Option<i64>,
    limit: u64,
) -> Result<(), Failure> {
    match show {
        Some(id) => {
            let mail = admin::outbox_mail(db, id).await.map_err(refused)?;
            outbox::print_mail(&mail);
        }
        None => {
            let mails = admin::outbox(db, state, limit).await.map_err(refused)?;
            outbox::print_list(&mails);
        }
    }
    Ok(())
}

fn out(text: &str) {
    use std::io::Write;
    let _ = std::io::stdout().write_all(text.as_bytes());
}

fn print_demo(base: &str, seed: &admin::DemoSeed) {
    let token = &seed.token;
    let org = admin::DEMO_ORGANIZER;
    let auth = format!("-H 'Authorization: Token {token}'");
    let json = "-H 'Content-Type: application/json'";
    outln!(
        "Demo data is ready. Paste these lines into a shell to follow the README's tour (new on every run, shown once):\n"
    );
    outln!("T={token}");
    outln!("TALK={}", seed.talk_token);
    outln!("P={}", seed.password);
    outln!("ID={}", seed.client_id);
    outln!("SECRET={}\n", seed.client_secret);
    outln!("T is a token of the organizer's team with every permission. Try:\n");
    outln!("  curl {auth} {base}/api/v1/organizers/{org}/giftcards/");
    outln!(
        "  curl {auth} {json} -d '{{\"value\": \"25.00\", \"currency\": \"EUR\"}}' {base}/api/v1/organizers/{org}/giftcards/"
    );
    outln!(
        "  curl {auth} {json} -d '{{\"value\": \"-5.00\", \"text\": \"coffee\"}}' {base}/api/v1/organizers/{org}/giftcards/1/transact/"
    );
    outln!(
        "  curl {auth} {json} -d '{{\"value\": \"-999.00\"}}' {base}/api/v1/organizers/{org}/giftcards/1/transact/   # 409"
    );
    outln!("  curl {auth} {base}/api/v1/organizers/{org}/giftcards/1/transactions/");
    outln!("  curl {auth} '{base}/api/v1/organizers/{org}/events/?lang=de'");
    outln!(
        "  curl {auth} '{base}/api/v1/organizers/{org}/events/{}/items/?lang=de'",
        admin::DEMO_EVENT
    );
    outln!(
        "  curl {auth} '{base}/api/v1/organizers/{org}/events/{}/quotas/?with_availability=true'",
        admin::DEMO_EVENT
    );
    outln!(
        "  curl {auth} {base}/api/v1/organizers/{org}/events/{}/orders/",
        admin::DEMO_EVENT
    );
    outln!(
        "  curl {auth} {json} -d '{{\"email\": \"grace@example.org\", \"positions\": [{{\"item\": 2, \"variation\": 3, \"voucher\": \"{}\"}}]}}' {base}/api/v1/organizers/{org}/events/{}/orders/",
        admin::DEMO_VOUCHER,
        admin::DEMO_EVENT
    );
    outln!(
        "  curl {auth} {json} -d '{{\"name\": {{\"en\": \"DemoCon 2\"}}, \"slug\": \"democon2\", \"currency\": \"EUR\", \"date_from\": \"2030-06-01T09:00:00Z\"}}' {base}/api/v1/organizers/{org}/events/{}/clone/",
        admin::DEMO_EVENT
    );
    outln!("\nInteractive API documentation: {base}/docs/\n");
    print_demo_talk(base, seed);
    print_demo_device(base, seed);
    print_demo_oauth(base, seed);
}

/// The demo device's initialization, when it is not initialized yet.
fn print_demo_device(base: &str, seed: &admin::DemoSeed) {
    let Some(token) = &seed.device_token else {
        return;
    };
    outln!(
        "The demo scanning device \"{}\" initializes once with (the answer holds its API token):\n",
        admin::DEMO_DEVICE
    );
    outln!(
        "  curl -H 'Content-Type: application/json' -d '{{\"token\": \"{token}\", \"hardware_brand\": \"Demo\", \"hardware_model\": \"cli\", \"software_brand\": \"curl\", \"software_version\": \"1\"}}' {base}/api/v1/device/initialize"
    );
    outln!("  curl -H 'Authorization: Device <api_token>' {base}/api/v1/device/info\n");
}

/// The talk side of the demo event: a user token and requests to try.
fn print_demo_talk(base: &str, seed: &admin::DemoSeed) {
    let token = &seed.talk_token;
    let auth = format!("-H 'Authorization: Token {token}'");
    let json = "-H 'Content-Type: application/json'";
    let ev = format!("{base}/api/events/{}", admin::DEMO_EVENT);
    outln!("The talk side (/api/): the demo user's token (shown once):\n\n  {token}\n");
    outln!("Try:\n");
    outln!("  curl {base}/api/");
    outln!("  curl {auth} {base}/api/events/");
    outln!(
        "  curl {auth} '{ev}/submissions/?state=submitted&expand=speakers,track,answers.question'"
    );
    outln!("  curl {auth} '{ev}/speakers/?q=grace&lang=en'");
    outln!("  curl {auth} {ev}/questions/?expand=options");
    outln!(
        "  curl {auth} {json} -d '{{\"name\": {{\"en\": \"Lightning talk\"}}, \"default_duration\": 5}}' {ev}/submission-types/"
    );
    outln!("  curl {auth} -X POST {ev}/submissions/<code>/accept/   # a submitted one's code");
    outln!("");
    let public = format!("{base}/{}/schedule/export", admin::DEMO_EVENT);
    outln!("Its released schedule, as conference apps read it (no token needed):\n");
    outln!("  curl {public}/schedule.json");
    outln!("  curl {public}/schedule.xml");
    outln!("  curl {public}/schedule.ics");
    outln!("  curl '{ev}/slots/?expand=room,submission.speakers'");
    outln!("  curl {auth} {ev}/schedules/latest/exporters/schedule.xml/");
    outln!("  curl {auth} {ev}/reviews/   # the demo user's reviews, scored in two categories");
    outln!("");
}

/// The demo user's sign-in and the OAuth flow of their application, by browser and curl.
fn print_demo_oauth(base: &str, seed: &admin::DemoSeed) {
    let (id, secret) = (&seed.client_id, &seed.client_secret);
    let redirect = admin::DEMO_REDIRECT_URI;
    outln!(
        "Demo user (password new on every run): {}  password: {}\n  Account page: {base}/account\n",
        admin::DEMO_USER,
        seed.password
    );
    outln!(
        "Their OAuth application \"{}\": client ID {id}, client secret (shown once):\n\n  {secret}\n",
        admin::DEMO_APP
    );
    outln!("1. Open in a browser, sign in as the demo user, choose the organizer and allow:\n");
    outln!("  {}\n", admin::demo_authorize_url(base, id));
    outln!(
        "2. The browser then fails to load {redirect}?code=...&state=demo: copy the code from its address bar and exchange it:\n"
    );
    outln!(
        "  curl -u {id}:{secret} -d grant_type=authorization_code -d code=CODE -d redirect_uri={redirect} {base}/api/v1/oauth/token\n"
    );
    outln!("3. Call the API with the access_token of the answer:\n");
    outln!("  curl -H 'Authorization: Bearer ACCESS_TOKEN' {base}/api/v1/me");
    outln!("  curl -H 'Authorization: Bearer ACCESS_TOKEN' {base}/api/v1/organizers/\n");
}
