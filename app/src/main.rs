//! The `tessera` binary: the framework assembled with its compiled-in plugins, and the CLI.

mod cli;

use std::process::ExitCode;

use tessera::App;

/// The plugins this binary is built with, in one place.
fn with_plugins(app: App) -> App {
    let stripe = tessera_plugin_stripe::Stripe::new(tessera_plugin_stripe::StripeConfig {
        api_base: app.config().stripe_api_base.clone(),
        js_url: app.config().stripe_js_url.clone(),
    });
    let presale = shop(&app);
    app.plugin(tessera_plugin_banktransfer::BankTransfer)
        .plugin(tessera_plugin_ticketoutputpdf::PdfTickets)
        .plugin(tessera_plugin_ticketoutputpdf::Badges)
        .plugin(stripe)
        .plugin(presale)
}

/// The shop, with pretix's widget script when the configuration names pretix's bundle (a
/// bundle that cannot be read is said in the log, and the shop runs without it).
fn shop(app: &App) -> tessera_plugin_presale::Presale {
    let Some(path) = &app.config().widget_bundle else {
        return tessera_plugin_presale::Presale::default();
    };
    match std::fs::read_to_string(path) {
        Ok(bundle) => tessera_plugin_presale::Presale::with_widget_bundle(&bundle),
        Err(error) => {
            tracing::error!(path = %path.display(), %error, "pretix's widget bundle cannot be read");
            tessera_plugin_presale::Presale::default()
        }
    }
}

/// Stack of each runtime thread. Requests are polled on the runtime's worker threads, and
/// unoptimised builds of the deeper handlers need more than the default 2 MiB; 8 MiB is what
/// the main thread has on Linux.
const THREAD_STACK_BYTES: usize = 8 * 1024 * 1024;

fn main() -> ExitCode {
    let command = match cli::parse() {
        Ok(command) => command,
        Err(code) => return code,
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(THREAD_STACK_BYTES)
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(cli::run(command, with_plugins)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("error: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}
