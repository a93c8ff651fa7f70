//! Dynamic plugins: libraries built with `tessera-plugin-sdk`, loaded at start with libloading.
//!
//! Only bytes cross the boundary (see the SDK): the host checks the library's ABI version,
//! reads its manifest once, then calls it with JSON. A library is never unloaded: code it ran
//! may have left thread-local destructors or threads behind that point into it.

use std::path::{Path, PathBuf};

use libloading::Library;
use serde_json::Value;
use tessera_plugin_sdk::{
    ABI_VERSION, AbiVersionFn, Buffer, CallFn, Envelope, FreeFn, Manifest, ManifestFn,
    SYMBOL_ABI_VERSION, SYMBOL_CALL, SYMBOL_FREE, SYMBOL_MANIFEST, SettingKind,
};

/// A loaded plugin library and its manifest.
///
/// It is `Send` and `Sync`: it holds plain data and function pointers into a library that is
/// never unloaded, and the SDK makes those functions callable from any thread at once (the
/// plugin is `Send + Sync`, kept in a `OnceLock`, and each call owns its buffers).
#[derive(Debug)]
pub struct PluginLibrary {
    manifest: Manifest,
    path: PathBuf,
    call: CallFn,
    free: FreeFn,
}

/// Why a library was refused.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be opened as a dynamic library.
    #[error("not a loadable library: {0}")]
    Open(String),
    /// The library lacks a function of the ABI.
    #[error("the library does not export `{0}`: not a Tessera plugin")]
    MissingSymbol(&'static str),
    /// The library speaks another version of the ABI.
    #[error(
        "the library speaks plugin ABI version {found}, this host speaks {expected}: \
         rebuild it against this host's tessera-plugin-sdk"
    )]
    AbiVersion {
        /// Version the library speaks.
        found: u32,
        /// Version this host speaks.
        expected: u32,
    },
    /// The manifest is not JSON of the expected shape, or declares something invalid.
    #[error("bad manifest: {0}")]
    Manifest(String),
    /// Someone other than this service's user (or root) could have changed the library or the
    /// directory it is in, so it is not opened: opening runs its code.
    #[error("{0}")]
    Permissions(String),
}

impl PluginLibrary {
    /// Opens the library at `path`, checks its ABI version and symbols, and reads its manifest.
    ///
    /// The file and the directory it is in are checked first ([`check_permissions`]): opening
    /// a library runs its initialisers, before any check of what it is.
    pub fn load(path: &Path) -> Result<Self, LoadError> {
        check_library_file(path).map_err(LoadError::Permissions)?;
        let (call, free, manifest) = open(path)?;
        let manifest =
            serde_json::from_slice(&manifest).map_err(|e| LoadError::Manifest(e.to_string()))?;
        check(&manifest).map_err(LoadError::Manifest)?;
        Ok(PluginLibrary {
            manifest,
            path: path.to_owned(),
            call,
            free,
        })
    }

    /// What the plugin is and brings.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Where the library was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Calls `method` with `input`, synchronously; an error envelope or an answer that is not
    /// one is an `Err` with a message.
    #[allow(unsafe_code)]
    pub fn call(&self, method: &str, input: &Value) -> Result<Value, String> {
        let input = input.to_string();
        // SAFETY: both pointers are valid for their lengths during the call, which only reads
        // them; `call` and `free` come from the same library, which is never unloaded.
        let answer = unsafe {
            let buffer = (self.call)(method.as_ptr(), method.len(), input.as_ptr(), input.len());
            take(self.free, buffer)
        };
        match serde_json::from_slice(&answer) {
            Ok(Envelope::Ok(value)) => Ok(value),
            Ok(Envelope::Error(message)) => Err(message),
            Err(e) => Err(format!("the plugin gave an invalid answer: {e}")),
        }
    }
}

/// Every library (`.so`, `.dylib`, `.dll`) in `dir`, by file name; refused libraries are
/// logged and skipped, and a directory that cannot be read, or that others than this
/// service's user could write to ([`check_permissions`]), gives none.
pub fn load_dir(dir: &Path) -> Vec<PluginLibrary> {
    if let Err(error) = check_permissions(dir) {
        tracing::error!(dir = %dir.display(), %error, "plugin directory refused");
        return Vec::new();
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) => {
            tracing::error!(dir = %dir.display(), %error, "plugin directory unreadable");
            return Vec::new();
        }
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|p| {
            p.extension()
                .is_some_and(|ext| ext == "so" || ext == "dylib" || ext == "dll")
        })
        .collect();
    paths.sort();
    paths
        .into_iter()
        .filter_map(|p| match PluginLibrary::load(&p) {
            Ok(library) => Some(library),
            Err(error) => {
                tracing::error!(path = %p.display(), %error, "plugin library refused");
                None
            }
        })
        .collect()
}

/// Checks that only this service's user (or root) can change the file or directory at
/// `path`: it must be owned by one of them and not writable by group or others. Symbolic
/// links are followed.
#[cfg(unix)]
pub fn check_permissions(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;

    let metadata =
        std::fs::metadata(path).map_err(|e| format!("{} cannot be read: {e}", path.display()))?;
    let mode = metadata.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(format!(
            "{} is writable by group or others (mode {mode:04o}); allow only its owner to write it",
            path.display()
        ));
    }
    let owner = metadata.uid();
    let service = service_uid()
        .ok_or_else(|| format!("{}: this service's user is unknown", path.display()))?;
    // Root may own it too: root can change anything the service runs anyway.
    if owner != service && owner != 0 {
        return Err(format!(
            "{} is owned by uid {owner}, neither this service's user (uid {service}) nor root",
            path.display()
        ));
    }
    Ok(())
}

/// No permissions to check beyond what the system enforces.
#[cfg(not(unix))]
pub fn check_permissions(_path: &Path) -> Result<(), String> {
    Ok(())
}

/// [`check_permissions`] of a library file and of the directory it really is in (a symbolic
/// link's target may be elsewhere, where others could replace it).
fn check_library_file(path: &Path) -> Result<(), String> {
    check_permissions(path)?;
    let real = std::fs::canonicalize(path)
        .map_err(|e| format!("{} cannot be resolved: {e}", path.display()))?;
    match real.parent() {
        Some(dir) => check_permissions(dir),
        None => Ok(()),
    }
}

/// The effective user ID of this process, found once: from `/proc/self/status` where there
/// is one, else as the owner of a file the process creates (files belong to the effective
/// user), so that no foreign function needs to be called.
#[cfg(unix)]
fn service_uid() -> Option<u32> {
    use std::sync::OnceLock;

    static UID: OnceLock<Option<u32>> = OnceLock::new();
    *UID.get_or_init(|| proc_status_euid().or_else(created_file_owner))
}

/// The effective UID on the `Uid:` line of `/proc/self/status` (real, effective, saved, fs).
#[cfg(unix)]
fn proc_status_euid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("Uid:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The owner of a new file in the temporary directory, removed at once.
#[cfg(unix)]
fn created_file_owner() -> Option<u32> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};

    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let path = std::env::temp_dir().join(format!(".tessera-uid-{}-{nanos}", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .ok()?;
    let owner = file.metadata().ok().map(|m| m.uid());
    let _ = std::fs::remove_file(&path);
    owner
}

/// Opens the library (for good), checks its ABI version and symbols, and answers its `call` and
/// `free` functions and a copy of its manifest.
#[allow(unsafe_code)]
fn open(path: &Path) -> Result<(CallFn, FreeFn, Vec<u8>), LoadError> {
    // SAFETY: opening runs the library's initialisers. Libraries in the plugin directory are
    // trusted like the host binary (only its user or root can have written them, see
    // `check_permissions`); the library is leaked, so its code outlives every pointer
    // taken from it.
    let library: &'static Library = Box::leak(Box::new(
        unsafe { Library::new(path) }.map_err(|e| LoadError::Open(e.to_string()))?,
    ));
    // SAFETY: the SDK declares the symbol with this type.
    let abi_version: AbiVersionFn = unsafe { symbol(library, SYMBOL_ABI_VERSION)? };
    // SAFETY: the function takes nothing and returns a number in every ABI version.
    let found = unsafe { abi_version() };
    if found != ABI_VERSION {
        return Err(LoadError::AbiVersion {
            found,
            expected: ABI_VERSION,
        });
    }
    // SAFETY: in this ABI version the SDK declares the symbols with these types.
    let (manifest, call, free): (ManifestFn, CallFn, FreeFn) = unsafe {
        (
            symbol(library, SYMBOL_MANIFEST)?,
            symbol(library, SYMBOL_CALL)?,
            symbol(library, SYMBOL_FREE)?,
        )
    };
    // SAFETY: the manifest buffer comes from this library, which `free` belongs to.
    let manifest = unsafe { take(free, manifest()) };
    Ok((call, free, manifest))
}

/// The function exported as `name`.
///
/// # Safety
///
/// `T` must be the function pointer type the library exports under `name`.
#[allow(unsafe_code)]
unsafe fn symbol<T: Copy>(library: &'static Library, name: &'static str) -> Result<T, LoadError> {
    // SAFETY: the caller promises the type; the library lives for ever.
    unsafe { library.get::<T>(name.as_bytes()) }
        .map(|symbol| *symbol)
        .map_err(|_| LoadError::MissingSymbol(name))
}

/// Copies the bytes of a buffer the plugin returned and frees it through the plugin.
///
/// # Safety
///
/// `buffer` was returned by a function of the library `free` belongs to and is not freed yet.
#[allow(unsafe_code)]
unsafe fn take(free: FreeFn, buffer: Buffer) -> Vec<u8> {
    // SAFETY: the caller promises the buffer is live and belongs to `free`'s library.
    unsafe {
        let bytes = buffer.bytes().to_vec();
        free(buffer);
        bytes
    }
}

/// Checks what the host relies on: a usable name, identifiers, and endpoints it can route.
fn check(manifest: &Manifest) -> Result<(), String> {
    let name = &manifest.name;
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
    {
        return Err(format!("the name {name:?} is not made of [a-z0-9_-]"));
    }
    if manifest.settings.iter().any(|s| s.key.is_empty()) {
        return Err("a setting has an empty key".into());
    }
    if let Some(s) = manifest.settings.iter().find(|s| {
        let (min, max) = s.bounds();
        s.kind == SettingKind::Int && min > max
    }) {
        return Err(format!(
            "the setting {:?} has a minimum above its maximum",
            s.key
        ));
    }
    if manifest
        .payment_providers
        .iter()
        .any(|p| p.identifier.is_empty())
    {
        return Err("a payment provider has an empty identifier".into());
    }
    for endpoint in &manifest.endpoints {
        let (method, path) = (&endpoint.method, &endpoint.path);
        if !["GET", "POST", "PUT", "PATCH", "DELETE"].contains(&method.as_str()) {
            return Err(format!("the endpoint {path:?} has the method {method:?}"));
        }
        if path.starts_with('/') || path.split('/').any(|segment| segment == "..") {
            return Err(format!("the endpoint path {path:?} is not relative"));
        }
    }
    Ok(())
}
