//! Reading PDFs back with the tools `.ci/setup` installs: `qpdf --check` (structure),
//! `pdftotext` (the text), `pdftoppm` and `zbarimg` (QR codes). Without them the checks
//! are skipped with one line, unless `TESSERA_PDF_TOOLS=required` (as `.ci/run` sets).

use std::process::Command;

/// Whether the tools are here; panics when they are required and missing.
fn tools() -> bool {
    let here = ["qpdf", "pdftotext", "pdftoppm", "zbarimg"]
        .iter()
        .all(|t| Command::new(t).arg("--version").output().is_ok());
    if !here {
        let required = std::env::var("TESSERA_PDF_TOOLS").is_ok_and(|v| v == "required");
        assert!(
            !required,
            "TESSERA_PDF_TOOLS=required, but qpdf, poppler-utils or zbar-tools is missing"
        );
        println!("skipped PDF checks: qpdf, poppler-utils or zbar-tools is missing");
    }
    here
}

/// Writes the PDF to a temporary file.
fn file(pdf: &[u8]) -> tempfile::NamedTempFile {
    let f = tempfile::Builder::new()
        .suffix(".pdf")
        .tempfile()
        .expect("temp file");
    std::fs::write(f.path(), pdf).expect("written");
    f
}

/// Checks a PDF as a file: it starts as one, and `qpdf --check` finds no error. Gives its
/// text as `pdftotext` extracts it (`None` without the tools).
pub fn checked_text(pdf: &[u8]) -> Option<String> {
    assert!(pdf.starts_with(b"%PDF-"), "not a PDF");
    if !tools() {
        return None;
    }
    let f = file(pdf);
    let check = Command::new("qpdf")
        .arg("--check")
        .arg(f.path())
        .output()
        .expect("qpdf");
    let said = String::from_utf8_lossy(&check.stdout);
    assert!(
        check.status.success() && said.contains("No syntax or stream encoding errors"),
        "qpdf --check: {said}{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let text = Command::new("pdftotext")
        .args([f.path().to_str().expect("path"), "-"])
        .output()
        .expect("pdftotext");
    assert!(text.status.success());
    Some(String::from_utf8_lossy(&text.stdout).into_owned())
}

/// The QR codes of a PDF's first page, decoded (`None` without the tools).
pub fn qr_codes(pdf: &[u8]) -> Option<Vec<String>> {
    if !tools() {
        return None;
    }
    let f = file(pdf);
    let dir = tempfile::tempdir().expect("dir");
    let prefix = dir.path().join("page");
    let raster = Command::new("pdftoppm")
        .args(["-r", "150", "-f", "1", "-l", "1", "-png"])
        .arg(f.path())
        .arg(&prefix)
        .output()
        .expect("pdftoppm");
    assert!(raster.status.success());
    let page = std::fs::read_dir(dir.path())
        .expect("pages")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "png"))
        .expect("a page image");
    let scan = Command::new("zbarimg")
        .args(["-q", "--raw"])
        .arg(&page)
        .output()
        .expect("zbarimg");
    Some(
        String::from_utf8_lossy(&scan.stdout)
            .lines()
            .map(str::to_owned)
            .collect(),
    )
}

/// The colour of the first page at `(x, y)` millimetres from its bottom-left corner,
/// rasterised at 72 dpi (`None` without the tools).
pub fn colour_at(pdf: &[u8], x: f32, y: f32) -> Option<[u8; 3]> {
    if !tools() {
        return None;
    }
    let f = file(pdf);
    let raster = Command::new("pdftoppm")
        .args(["-r", "72", "-f", "1", "-l", "1", "-singlefile"])
        .arg(f.path())
        .output()
        .expect("pdftoppm");
    assert!(raster.status.success());
    // A binary PPM: "P6", width, height and the largest value, then RGB rows from the top.
    let ppm = raster.stdout;
    let mut fields = Vec::new();
    let mut at = 0;
    while fields.len() < 4 {
        while ppm[at].is_ascii_whitespace() {
            at += 1;
        }
        let start = at;
        while !ppm[at].is_ascii_whitespace() {
            at += 1;
        }
        fields.push(String::from_utf8_lossy(&ppm[start..at]).into_owned());
    }
    assert_eq!(fields[0], "P6");
    let (width, height): (usize, usize) = (
        fields[1].parse().expect("width"),
        fields[2].parse().expect("height"),
    );
    let pixels = &ppm[at + 1..];
    let points = |mm: f32| (mm * 72.0 / 25.4) as usize;
    let (column, row) = (points(x), height - points(y));
    let i = (row * width + column) * 3;
    Some([pixels[i], pixels[i + 1], pixels[i + 2]])
}
