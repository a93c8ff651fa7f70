//! Validating EN 16931 e-invoices with `tests/einvoice/check.py` (the XML Schema, the CEN
//! EN 16931 rules, and Factur-X's or XRechnung's rules, as the document declares; for a PDF
//! also its Factur-X attachment and XMP metadata) in the virtual environment `.ci/setup`
//! makes at `.ci/venv-einvoice`. With `TESSERA_EINVOICE=required` (as `.ci/run` sets it) a
//! missing validator fails the test, with `skip` the checks are skipped, and unset they run
//! when the validator is installed.

use std::path::{Path, PathBuf};
use std::process::Command;

use tessera_tests::process::{installed_tool, workspace};

/// The validator's Python, or `None` when the checks are skipped.
fn validator() -> Option<PathBuf> {
    installed_tool(
        ".ci/venv-einvoice/bin/python",
        "TESSERA_EINVOICE",
        "the e-invoice validator",
    )
}

/// Runs the validator on files: whether all are valid, and what it said.
fn check(python: &Path, files: &[&Path]) -> (bool, String) {
    let out = Command::new(python)
        .arg(workspace().join("tests/einvoice/check.py"))
        .args(files)
        .output()
        .expect("the e-invoice validator runs");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), said)
}

/// Writes bytes to a temporary file with this suffix.
fn file(bytes: &[u8], suffix: &str) -> tempfile::NamedTempFile {
    let f = tempfile::Builder::new()
        .suffix(suffix)
        .tempfile()
        .expect("temp file");
    std::fs::write(f.path(), bytes).expect("written");
    f
}

/// Fails the test with the validator's findings unless the CII document (XRechnung 3.0 or
/// Factur-X EN 16931, as it declares) is valid; warnings are allowed.
pub fn assert_valid_cii(xml: &[u8]) {
    assert!(!xml.is_empty(), "an empty e-invoice");
    let Some(python) = validator() else {
        return;
    };
    let f = file(xml, ".xml");
    let (valid, said) = check(&python, &[f.path()]);
    assert!(
        valid,
        "the e-invoice is not valid:\n{said}\n{}",
        String::from_utf8_lossy(xml)
    );
}

/// Fails the test with the validator's findings unless the PDF is a Factur-X invoice of
/// profile EN 16931: a valid `factur-x.xml` attached as an associated file, and XMP
/// metadata that declare it.
pub fn assert_valid_facturx_pdf(pdf: &[u8]) {
    assert!(pdf.starts_with(b"%PDF-"), "not a PDF");
    let Some(python) = validator() else {
        return;
    };
    let f = file(pdf, ".pdf");
    let (valid, said) = check(&python, &[f.path()]);
    assert!(valid, "the Factur-X PDF is not valid:\n{said}");
}

/// The sample documents of `tests/einvoice/samples` (made by the unit tests of the e-invoice
/// writer with `TESSERA_EINVOICE_OUT`).
fn samples() -> Vec<PathBuf> {
    let dir = workspace().join("tests/einvoice/samples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the samples")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "xml"))
        .collect();
    files.sort();
    files
}

#[test]
fn the_validator_accepts_the_samples_of_both_profiles() {
    let Some(python) = validator() else {
        return;
    };
    let files = samples();
    let paths: Vec<&Path> = files.iter().map(PathBuf::as_path).collect();
    let (valid, said) = check(&python, &paths);
    assert!(valid, "{said}");
    assert_eq!(said.matches(": valid (").count(), files.len(), "{said}");
    assert!(said.contains("KoSIT XRechnung CII"), "{said}");
    assert!(said.contains("Factur-X EN 16931 Schematron"), "{said}");
}

#[test]
fn the_validator_names_the_rules_a_broken_invoice_breaks() {
    let Some(python) = validator() else {
        return;
    };
    let dir = workspace().join("tests/einvoice/samples");
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).expect("a sample");
    let xrechnung = read("standard-xrechnung.xml");
    assert_valid_cii(xrechnung.as_bytes());
    let total = file(
        xrechnung
            .replace(
                "<ram:GrandTotalAmount>33.06<",
                "<ram:GrandTotalAmount>33.07<",
            )
            .as_bytes(),
        ".xml",
    );
    let unreferenced = file(
        xrechnung
            .replace("<ram:BuyerReference>AB1CD</ram:BuyerReference>", "")
            .as_bytes(),
        ".xml",
    );
    let facturx = read("standard-facturx.xml");
    let unknown = file(
        facturx
            .replace("<ram:LineTwo>", "<ram:Unknown>")
            .replace("</ram:LineTwo>", "</ram:Unknown>")
            .as_bytes(),
        ".xml",
    );
    for (broken, rule) in [
        (&total, "CEN [BR-CO-15] fatal"),
        (&unreferenced, "KoSIT [BR-DE-15] fatal"),
        (&unknown, "XSD [schema] error"),
    ] {
        let (valid, said) = check(&python, &[broken.path()]);
        assert!(!valid, "{said}");
        assert!(said.contains(rule), "{rule} expected: {said}");
        assert!(said.contains(": invalid ("), "{said}");
    }
}

#[test]
fn a_factur_x_pdf_is_checked_by_its_attachment_and_its_xmp_metadata() {
    let Some(python) = validator() else {
        return;
    };
    let plain =
        std::fs::read(workspace().join("tests/fixtures/background-cairo.pdf")).expect("a PDF");
    let xml = workspace().join("tests/einvoice/samples/standard-facturx.xml");
    let base = file(&plain, ".pdf");
    let hybrid = file(b"", ".pdf");
    // The factur-x library embeds the XML and writes the XMP metadata as the profile says.
    let made = Command::new(&python)
        .args([
            "-c",
            "import sys, facturx; pdf = open(sys.argv[1], 'rb').read(); \
             xml = open(sys.argv[2], 'rb').read(); \
             open(sys.argv[3], 'wb').write(facturx.generate_from_binary(pdf, xml))",
        ])
        .arg(base.path())
        .arg(&xml)
        .arg(hybrid.path())
        .output()
        .expect("python runs");
    assert!(made.status.success(), "{made:?}");
    assert_valid_facturx_pdf(&std::fs::read(hybrid.path()).expect("the hybrid PDF"));
    let (valid, said) = check(&python, &[base.path()]);
    assert!(!valid, "{said}");
    assert!(
        said.contains("PDF [attachment] error: no factur-x.xml embedded"),
        "{said}"
    );
}
