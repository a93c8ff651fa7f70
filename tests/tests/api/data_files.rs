//! The files a server keeps on disk: its SQLite database in the data directory is readable
//! by the service's user alone.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use tessera_tests::TestApp;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o7777
}

#[tokio::test]
async fn a_fresh_data_directory_and_its_database_files_are_private_to_the_service() {
    let root = tempfile::tempdir().expect("a temporary directory");
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let data_dir = root.path().join("var").join("data");
    let configured = data_dir.clone();

    // The default database: a SQLite file in the data directory, whatever the tests' backend.
    let app = TestApp::spawn_with(move |c| {
        c.database_url = None;
        c.data_dir = configured;
    })
    .await;
    app.organizer("acme").await;

    assert_eq!(mode(&root.path().join("var")), 0o700);
    assert_eq!(mode(&data_dir), 0o700);
    for name in [
        "tessera.sqlite3",
        "tessera.sqlite3-wal",
        "tessera.sqlite3-shm",
    ] {
        assert_eq!(mode(&data_dir.join(name)), 0o600, "{name}");
    }
}

#[tokio::test]
async fn an_existing_database_file_keeps_the_mode_its_owner_gave_it() {
    let root = tempfile::tempdir().expect("a temporary directory");
    let file = root.path().join("tessera.sqlite3");
    std::fs::write(&file, b"").expect("an empty database");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    let configured = root.path().to_owned();

    let app = TestApp::spawn_with(move |c| {
        c.database_url = None;
        c.data_dir = configured;
    })
    .await;
    app.organizer("acme").await;

    assert_eq!(mode(&file), 0o640);
}
