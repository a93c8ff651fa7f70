//! The typefaces documents are set in, built into the binary (`framework/fonts/`): Open Sans
//! in four styles, and Droid Sans Fallback for the characters they lack (Chinese, Japanese,
//! Korean, ...). Each is parsed once.

use std::sync::LazyLock;

use skrifa::instance::{LocationRef, Size};
use skrifa::metrics::Metrics;
use skrifa::{FontRef, GlyphId, MetadataProvider, charmap::Charmap};

/// One of the built-in faces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FaceId {
    /// Open Sans.
    Regular = 0,
    /// Open Sans Bold.
    Bold = 1,
    /// Open Sans Italic.
    Italic = 2,
    /// Open Sans Bold Italic.
    BoldItalic = 3,
    /// Droid Sans Fallback.
    Fallback = 4,
}

impl FaceId {
    /// Every face, in the order of their numbers.
    pub const ALL: [FaceId; 5] = [
        FaceId::Regular,
        FaceId::Bold,
        FaceId::Italic,
        FaceId::BoldItalic,
        FaceId::Fallback,
    ];

    /// The Open Sans face of this weight and slant.
    pub fn styled(bold: bool, italic: bool) -> Self {
        match (bold, italic) {
            (false, false) => FaceId::Regular,
            (true, false) => FaceId::Bold,
            (false, true) => FaceId::Italic,
            (true, true) => FaceId::BoldItalic,
        }
    }

    /// The face's data and metrics.
    pub fn face(self) -> &'static Face {
        &FACES[self as usize]
    }
}

/// A parsed face.
pub struct Face {
    /// Its PostScript name.
    pub postscript_name: &'static str,
    /// The font file.
    pub data: &'static [u8],
    /// Whether it slants.
    pub italic: bool,
    charmap: Charmap<'static>,
    /// The glyphs of the characters below [`TABLED`], looked up once (0: none).
    tabled: Vec<u16>,
    /// Every glyph's advance, in thousandths of the font size.
    advances: Vec<f32>,
    /// Its metrics in font units.
    pub metrics: Metrics,
}

/// Characters below this (Latin, with Latin-1 and Latin Extended A and B) have their
/// glyphs in a table: setting text looks each character up, and a font's own map is slower.
const TABLED: u32 = 0x250;

impl std::fmt::Debug for Face {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.postscript_name)
    }
}

impl Face {
    fn parse(postscript_name: &'static str, data: &'static [u8], italic: bool) -> Self {
        // The files are part of the binary and tested: a failure here is a broken build.
        #[allow(clippy::expect_used)]
        let font = FontRef::new(data).expect("a built-in font parses");
        let charmap = font.charmap();
        let metrics = font.metrics(Size::unscaled(), LocationRef::default());
        let glyphs = font.glyph_metrics(Size::unscaled(), LocationRef::default());
        let per_em = 1000.0 / f32::from(metrics.units_per_em);
        let advances = (0..glyphs.glyph_count())
            .map(|g| glyphs.advance_width(GlyphId::new(g)).unwrap_or(0.0) * per_em)
            .collect();
        let tabled = (0..TABLED)
            .map(|c| {
                char::from_u32(c)
                    .and_then(|c| charmap.map(c))
                    .map_or(0, |g| g.to_u32() as u16)
            })
            .collect();
        Face {
            postscript_name,
            data,
            italic,
            charmap,
            tabled,
            advances,
            metrics,
        }
    }

    /// The glyph of a character, if the face has one.
    pub fn glyph(&self, c: char) -> Option<u16> {
        let glyph = match self.tabled.get(c as usize) {
            Some(&g) => g,
            None => self.charmap.map(c).map_or(0, |g| g.to_u32() as u16),
        };
        (glyph != 0).then_some(glyph)
    }

    /// A glyph's advance in thousandths of the font size.
    pub fn advance(&self, glyph: u16) -> f32 {
        self.advances
            .get(usize::from(glyph))
            .copied()
            .unwrap_or(0.0)
    }

    /// A value in font units as thousandths of the font size.
    pub fn per_mille(&self, units: f32) -> f32 {
        units * 1000.0 / f32::from(self.metrics.units_per_em)
    }
}

static FACES: LazyLock<[Face; 5]> = LazyLock::new(|| {
    [
        Face::parse(
            "OpenSans",
            include_bytes!("../../fonts/OpenSans-Regular.ttf"),
            false,
        ),
        Face::parse(
            "OpenSans-Bold",
            include_bytes!("../../fonts/OpenSans-Bold.ttf"),
            false,
        ),
        Face::parse(
            "OpenSans-Italic",
            include_bytes!("../../fonts/OpenSans-Italic.ttf"),
            true,
        ),
        Face::parse(
            "OpenSans-BoldItalic",
            include_bytes!("../../fonts/OpenSans-BoldItalic.ttf"),
            true,
        ),
        Face::parse(
            "DroidSansFallback",
            include_bytes!("../../fonts/DroidSansFallback.ttf"),
            false,
        ),
    ]
});

/// The face and glyph a character is set with: the style's face when it has the character,
/// else the fallback face when that has it, else the style's "missing" glyph.
pub fn glyph_for(style: FaceId, c: char) -> (FaceId, u16) {
    if let Some(g) = style.face().glyph(c) {
        return (style, g);
    }
    match FaceId::Fallback.face().glyph(c) {
        Some(g) => (FaceId::Fallback, g),
        None => (style, 0),
    }
}

/// How wide a text is at this size, in points.
pub fn width(style: FaceId, text: &str, size: f32) -> f32 {
    text.chars()
        .map(|c| {
            let (face, g) = glyph_for(style, c);
            face.face().advance(g)
        })
        .sum::<f32>()
        * size
        / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin_czech_and_german_letters_are_in_open_sans_and_cjk_falls_back() {
        for c in "Jiří Dvořák, Müßig, Łódź".chars() {
            assert_eq!(glyph_for(FaceId::Regular, c).0, FaceId::Regular, "{c}");
        }
        for c in "山田太郎김민준".chars() {
            let (face, glyph) = glyph_for(FaceId::Bold, c);
            assert_eq!(face, FaceId::Fallback, "{c}");
            assert_ne!(glyph, 0);
        }
        assert!(width(FaceId::Regular, "Ticket", 10.0) > 20.0);
    }
}
