//! The `tessera` binary: the framework assembled with its compiled-in plugins, and the CLI.

mod cli;

use std::process::ExitCode;

use tessera::App;

/// The plugins this binary is built with, in one place.
fn with_plugins(app: App) -> App {
    app.plugin(tessera_plugin_banktransfer::BankTransfer)
}

#[tokio::main]
async fn main() -> ExitCode {
    let command = match cli::parse() {
        Ok(command) => command,
        Err(code) => return code,
    };
    match cli::run(command, with_plugins).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("error: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}
