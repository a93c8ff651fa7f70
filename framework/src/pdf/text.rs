//! Breaking text into lines of a width, as pretix's paragraphs do: at spaces and after
//! hyphens, words longer than a line split where asked.

use super::fonts::{FaceId, width};

/// The most lines one area sets; text beyond them is dropped.
pub const MAX_LINES: usize = 200;

/// A line and its width in points.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// Its text.
    pub text: String,
    /// Its width at the size it was broken for.
    pub width: f32,
}

/// Breaks `text` into lines no wider than `max_width` points (a longer word overflows
/// unless `split_long_words`). Each `\n` starts a line.
pub fn lines(
    text: &str,
    face: FaceId,
    size: f32,
    max_width: f32,
    split_long_words: bool,
) -> Vec<Line> {
    let space = width(face, " ", size);
    let mut out: Vec<Line> = Vec::new();
    for paragraph in text.split('\n') {
        let mut line = Line {
            text: String::new(),
            width: 0.0,
        };
        for (word, spaced) in words(paragraph) {
            if out.len() >= MAX_LINES {
                return out;
            }
            let w = width(face, word, size);
            let gap = if spaced && !line.text.is_empty() {
                space
            } else {
                0.0
            };
            if line.text.is_empty() || line.width + gap + w <= max_width {
                if gap > 0.0 {
                    line.text.push(' ');
                }
                line.text.push_str(word);
                line.width += gap + w;
                continue;
            }
            out.push(std::mem::replace(
                &mut line,
                Line {
                    text: word.to_owned(),
                    width: w,
                },
            ));
        }
        if split_long_words {
            split_overlong(line, face, size, max_width, &mut out);
        } else {
            out.push(line);
        }
    }
    out.truncate(MAX_LINES);
    out
}

/// Pushes a line, broken between characters where it is wider than `max_width`.
fn split_overlong(line: Line, face: FaceId, size: f32, max_width: f32, out: &mut Vec<Line>) {
    if line.width <= max_width {
        out.push(line);
        return;
    }
    let mut piece = Line {
        text: String::new(),
        width: 0.0,
    };
    for c in line.text.chars() {
        let w = width(face, c.encode_utf8(&mut [0; 4]), size);
        if !piece.text.is_empty() && piece.width + w > max_width {
            out.push(std::mem::replace(
                &mut piece,
                Line {
                    text: String::new(),
                    width: 0.0,
                },
            ));
            if out.len() >= MAX_LINES {
                return;
            }
        }
        piece.text.push(c);
        piece.width += w;
    }
    out.push(piece);
}

/// The words of a paragraph, each with whether a space came before it. A hyphen ends a
/// word too, with no space after it.
fn words(paragraph: &str) -> impl Iterator<Item = (&str, bool)> {
    paragraph.split(' ').flat_map(|chunk| {
        let mut parts = Vec::new();
        let mut start = 0;
        for (i, c) in chunk.char_indices() {
            if c == '-' && i + 1 < chunk.len() {
                parts.push((&chunk[start..=i], start == 0));
                start = i + 1;
            }
        }
        parts.push((&chunk[start..], start == 0));
        parts.into_iter().filter(|(w, _)| !w.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_breaks_at_spaces_and_after_hyphens_and_long_words_split() {
        let at = |text: &str, w: f32, split: bool| -> Vec<String> {
            lines(text, FaceId::Regular, 10.0, w, split)
                .into_iter()
                .map(|l| l.text)
                .collect()
        };
        assert_eq!(at("one two three", 1000.0, true), ["one two three"]);
        assert_eq!(at("one two three", 45.0, true), ["one two", "three"]);
        assert_eq!(at("first\nsecond", 1000.0, true), ["first", "second"]);
        assert_eq!(at("Rhein-Main", 30.0, true), ["Rhein-", "Main"]);
        let split = at("Donaudampfschifffahrt", 40.0, true);
        assert!(split.len() > 1, "{split:?}");
        assert_eq!(split.concat(), "Donaudampfschifffahrt");
        assert_eq!(at("Donaudampfschifffahrt", 40.0, false).len(), 1);
        assert_eq!(at(&"a ".repeat(10_000), 1.0, true).len(), MAX_LINES);
    }
}
