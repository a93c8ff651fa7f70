//! QR codes drawn as vector paths.

use pdf_writer::Content;
use qrcode::bits::encode_auto;
use qrcode::canvas::{Canvas, MaskPattern};
use qrcode::{Color, EcLevel};

/// Draws `data` as a QR code filling the square of `size` points whose bottom-left corner
/// is at `(x, y)`, with pretix's error correction (H, M above 32 characters, L above 128)
/// and, unless `no_whitespace`, a quiet zone of four modules. Data too long for any QR code
/// draws nothing.
///
/// The mask is fixed: choosing the best of eight takes most of the time of a ticket, and
/// every mask is valid; scanners read each.
pub fn draw(content: &mut Content, data: &str, x: f32, y: f32, size: f32, no_whitespace: bool) {
    let level = match data.len() {
        0..=32 => EcLevel::H,
        33..=128 => EcLevel::M,
        _ => EcLevel::L,
    };
    let Some(modules) = modules(data.as_bytes(), level) else {
        return;
    };
    let n = (modules.len() as f64).sqrt() as usize;
    let border = if no_whitespace { 0 } else { 4 };
    let cell = size / (n + 2 * border) as f32;
    // Drawn in modules, bottom row 0: whole numbers are written shortest and fastest.
    let origin = border as f32 * cell;
    content.save_state();
    content.transform([cell, 0.0, 0.0, cell, x + origin, y + origin]);
    for row in 0..n {
        let bottom = (n - row - 1) as f32;
        let mut col = 0;
        while col < n {
            if modules[row * n + col] != Color::Dark {
                col += 1;
                continue;
            }
            let start = col;
            while col < n && modules[row * n + col] == Color::Dark {
                col += 1;
            }
            content.rect(start as f32, bottom, (col - start) as f32, 1.0);
        }
    }
    content.fill_nonzero();
    content.restore_state();
}

/// The modules of a QR code of `data`, row by row.
fn modules(data: &[u8], level: EcLevel) -> Option<Vec<Color>> {
    let bits = encode_auto(data, level).ok()?;
    let version = bits.version();
    let (data, ec) = qrcode::ec::construct_codewords(&bits.into_bytes(), version, level).ok()?;
    let mut canvas = Canvas::new(version, level);
    canvas.draw_all_functional_patterns();
    canvas.draw_data(&data, &ec);
    canvas.apply_mask(MaskPattern::Checkerboard);
    Some(canvas.into_colors())
}
