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
    SYMBOL_ABI_VERSION, SYMBOL_CALL, SYMBOL_FREE, SYMBOL_MANIFEST,
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
}

impl PluginLibrary {
    /// Opens the library at `path`, checks its ABI version and symbols, and reads its manifest.
    pub fn load(path: &Path) -> Result<Self, LoadError> {
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
/// logged and skipped, and a directory that cannot be read gives none.
pub fn load_dir(dir: &Path) -> Vec<PluginLibrary> {
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

/// Opens the library (for good), checks its ABI version and symbols, and answers its `call` and
/// `free` functions and a copy of its manifest.
#[allow(unsafe_code)]
fn open(path: &Path) -> Result<(CallFn, FreeFn, Vec<u8>), LoadError> {
    // SAFETY: opening runs the library's initialisers. Libraries in the plugin directory are
    // trusted like the host binary; the library is leaked, so its code outlives every pointer
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
