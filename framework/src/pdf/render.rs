//! Renders a layout: one sheet (a ticket, a badge) for each set of values, each sheet the
//! background's pages with the layout's areas drawn on them, all sheets in one file.

use std::sync::Arc;

use pdf_writer::{Chunk, Content, Ref};

use super::background::Background;
use super::fonts::{FaceId, width};
use super::image::Image;
use super::layout::{Align, AreaKind, Layout, Source, TextArea, VerticalAlign};
use super::qr;
use super::text::{Line, lines};
use super::writer::Writer;

/// Points in a millimetre.
pub const MM: f32 = 72.0 / 25.4;

/// What a sheet's areas show.
pub trait Values {
    /// The text of a text area, or of a QR code that does not encode the secret.
    fn text(&self, source: &Source) -> String;
    /// The secret a QR code of `content` `secret` encodes, in full.
    fn secret(&self) -> String;
    /// The picture an image area of `content` shows (e.g. `question_photo`), if there is one.
    fn image(&self, _content: &str) -> Option<&Arc<Image>> {
        None
    }
}

/// A layout with its background, ready to render sheets: what does not change from one
/// ticket to the next is read once.
#[derive(Debug)]
pub struct Prepared {
    layout: Layout,
    background: Option<Background>,
    /// The page size without a background, in points.
    size: (f32, f32),
}

impl Prepared {
    /// Prepares a layout; without a background, its pages are `size_mm` (width, height).
    pub fn new(layout: Layout, background: Option<Background>, size_mm: (f32, f32)) -> Self {
        Prepared {
            layout,
            background,
            size: (size_mm.0 * MM, size_mm.1 * MM),
        }
    }

    /// The size of each page of a sheet, in points.
    pub fn page_sizes(&self) -> Vec<(f32, f32)> {
        match &self.background {
            Some(b) => b.sizes.clone(),
            None => vec![self.size],
        }
    }

    /// One file of a sheet for each of `sheets`, titled `title`.
    pub fn render(&self, sheets: &[&dyn Values], title: &str) -> Vec<u8> {
        let pairs: Vec<(&Prepared, &dyn Values)> = sheets.iter().map(|s| (self, *s)).collect();
        render(&pairs, title)
    }

    /// What the layout's image areas show (e.g. `question_photo`), each once.
    pub fn image_contents(&self) -> Vec<&str> {
        let mut contents: Vec<&str> = Vec::new();
        for area in &self.layout.areas {
            if let AreaKind::Image { content, .. } = &area.kind
                && !contents.contains(&content.as_str())
            {
                contents.push(content);
            }
        }
        contents
    }

    /// The languages the layout's areas ask for beside the document's.
    pub fn locales(&self) -> Vec<String> {
        let mut locales: Vec<String> = self
            .layout
            .areas
            .iter()
            .filter_map(|a| match &a.kind {
                AreaKind::Text(t) => t.source.locale.clone(),
                AreaKind::Barcode { source, .. } => source.locale.clone(),
                _ => None,
            })
            .collect();
        locales.sort();
        locales.dedup();
        locales
    }
}

/// One file of sheets, each rendered with its own prepared layout, titled `title`. The
/// backgrounds of different layouts are numbered apart in the file.
pub fn render(sheets: &[(&Prepared, &dyn Values)], title: &str) -> Vec<u8> {
    let mut prelude = Chunk::new();
    let mut first_free = 1;
    // Where each layout's background objects begin, by the layout's address.
    let mut offsets: Vec<(*const Prepared, i32)> = Vec::new();
    for (prepared, _) in sheets {
        let key = std::ptr::from_ref(*prepared);
        let Some(b) = &prepared.background else {
            continue;
        };
        if offsets.iter().any(|(k, _)| *k == key) {
            continue;
        }
        let offset = first_free - 1;
        if offset == 0 {
            prelude.extend(&b.chunk);
        } else {
            prelude.extend(&b.chunk.renumber(|r| Ref::new(r.get() + offset)));
        }
        first_free += b.first_free - 1;
        offsets.push((key, offset));
    }
    let mut doc = Writer::new();
    for (prepared, values) in sheets {
        let key = std::ptr::from_ref(*prepared);
        let offset = offsets
            .iter()
            .find(|(k, _)| *k == key)
            .map_or(0, |(_, o)| *o);
        for (index, (w, h)) in prepared.page_sizes().iter().enumerate() {
            doc.start_page(*w, *h);
            if let Some(form) = prepared
                .background
                .as_ref()
                .and_then(|b| b.forms.get(index))
            {
                doc.content().save_state();
                doc.draw_form(Ref::new(form.get() + offset));
                doc.content().restore_state();
            }
            let page = index as u32 + 1;
            for area in prepared.layout.areas.iter().filter(|a| a.page == page) {
                draw_area(
                    &mut doc,
                    *values,
                    area.left * MM,
                    area.bottom * MM,
                    &area.kind,
                );
            }
        }
    }
    let prelude = (first_free > 1).then_some(&prelude);
    doc.finish(prelude, first_free, title)
}

fn fill(content: &mut Content, [r, g, b]: [u8; 3]) {
    content.set_fill_rgb(
        f32::from(r) / 255.0,
        f32::from(g) / 255.0,
        f32::from(b) / 255.0,
    );
}

fn draw_area(doc: &mut Writer, values: &dyn Values, x: f32, y: f32, kind: &AreaKind) {
    match kind {
        AreaKind::Barcode {
            size,
            source,
            no_whitespace,
            color,
        } => {
            let data = if source.content.is_empty() || source.content == "secret" {
                values.secret()
            } else {
                values.text(source).trim().to_owned()
            };
            if data.is_empty() {
                return;
            }
            let c = doc.content();
            c.save_state();
            fill(c, *color);
            qr::draw(c, &data, x, y, size * MM, *no_whitespace);
            c.restore_state();
        }
        AreaKind::Image {
            width,
            height,
            content,
        } => {
            let (w, h) = (width * MM, height * MM);
            match values.image(content) {
                // Fitted into the area, centred, keeping its proportions, as pretix does.
                Some(image) => {
                    let scale = (w / image.aspect()).min(h);
                    let (iw, ih) = (scale * image.aspect(), scale);
                    doc.content().save_state();
                    doc.content().transform([
                        iw,
                        0.0,
                        0.0,
                        ih,
                        x + (w - iw) / 2.0,
                        y + (h - ih) / 2.0,
                    ]);
                    doc.draw_image(image);
                    doc.content().restore_state();
                }
                // No picture: pretix's grey placeholder.
                None => {
                    let c = doc.content();
                    c.save_state();
                    fill(c, [222, 222, 222]);
                    c.rect(x, y, w, h).fill_nonzero();
                    c.restore_state();
                }
            }
        }
        AreaKind::PoweredBy { size, white } => {
            let text = "powered by Tessera";
            let font_size = size * MM * 1000.0 / width(FaceId::Regular, text, 1000.0);
            doc.content().save_state();
            fill(
                doc.content(),
                if *white {
                    [255, 255, 255]
                } else {
                    [64, 64, 64]
                },
            );
            doc.text(FaceId::Regular, font_size, x, y, text);
            doc.content().restore_state();
        }
        AreaKind::Text(area) => draw_text(doc, values, x, y, area),
    }
}

/// A text area as pretix places it: a container's paragraph hangs from its top edge (or
/// sits in its middle or at its bottom) and shrinks to fit when asked; a legacy area grows
/// upwards from its bottom edge, or downwards from it.
fn draw_text(doc: &mut Writer, values: &dyn Values, x: f32, y: f32, area: &TextArea) {
    let text = values.text(&area.source);
    if text.trim().is_empty() {
        return;
    }
    let face = area.face.face();
    let ascent = face.per_mille(face.metrics.ascent) / 1000.0;
    let descent = face.per_mille(face.metrics.descent) / 1000.0;
    let max_width = area.width * MM;
    let mut size = area.font_size.max(0.1);
    let leading_factor = |size: f32| match area.line_height {
        Some(lh) => lh * 1.15 * size,
        None => (ascent - descent) * size,
    };
    loop_fit(area, &mut size, |size| {
        let set = lines(&text, area.face, size, max_width, area.split_long_words);
        let height = set.len() as f32 * leading_factor(size);
        let widest = set.iter().map(|l| l.width).fold(0.0, f32::max);
        (height, widest)
    });
    let set: Vec<Line> = lines(&text, area.face, size, max_width, area.split_long_words);
    let leading = leading_factor(size);
    let height = set.len() as f32 * leading;
    // Where the paragraph's top edge is, from the point the area turns about.
    let (origin_y, top) = match area.height {
        Some(box_height) => {
            let box_height = box_height * MM;
            let top = match area.vertical_align {
                VerticalAlign::Top => 0.0,
                VerticalAlign::Middle => (height - box_height) / 2.0,
                VerticalAlign::Bottom => height - box_height,
            };
            (y + box_height, top)
        }
        None if area.downward => (y, -descent * size / 2.5),
        None => {
            let lh = area.line_height.map_or(1.0, |lh| lh * 1.15);
            let lowered = descent * size + (lh - 1.0) * area.font_size * 1.05;
            (y + height, -lowered)
        }
    };
    let c = doc.content();
    c.save_state();
    let turn = (-area.rotation).to_radians();
    let (sin, cos) = turn.sin_cos();
    c.transform([cos, sin, -sin, cos, x, origin_y]);
    fill(c, area.color);
    for (i, line) in set.iter().enumerate() {
        let baseline = top - ascent * size - i as f32 * leading;
        let left = match area.align {
            Align::Left => 0.0,
            Align::Center => (max_width - line.width) / 2.0,
            Align::Right => max_width - line.width,
        };
        doc.text(area.face, size, left, baseline, &line.text);
    }
    doc.content().restore_state();
}

/// Shrinks a container's font size as pretix does, at most 25 times, until `measure`
/// (height and widest line at a size) fits the box: by a tenth (at least 1 pt) while too
/// tall, else by a fortieth (at least 0.25 pt); never below 1 pt.
fn loop_fit(area: &TextArea, size: &mut f32, mut measure: impl FnMut(f32) -> (f32, f32)) {
    let (Some(box_height), true) = (area.height, area.autoresize) else {
        return;
    };
    let (box_height, box_width) = (box_height * MM, area.width * MM);
    for _ in 0..25 {
        let (height, widest) = measure(*size);
        if (height <= box_height && widest <= box_width) || *size <= 1.0 {
            return;
        }
        *size -= if height > box_height {
            (*size * 0.1).max(1.0)
        } else {
            (*size * 0.025).max(0.25)
        };
        *size = size.max(1.0);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    struct Ticket(&'static str);

    impl Values for Ticket {
        fn text(&self, source: &Source) -> String {
            match source.content.as_str() {
                "attendee_name" => self.0.to_owned(),
                "other" => source.text.clone(),
                _ => String::new(),
            }
        }
        fn secret(&self) -> String {
            "q7h3kz9mxw2t5vbn8r4pjc6yd".into()
        }
    }

    #[test]
    fn a_sheet_has_its_text_as_text_and_a_page_for_each_value() {
        let layout = Layout::parse(&json!([
            {"type": "barcodearea", "left": 130.4, "bottom": 204.5, "size": 64},
            {"type": "textcontainer", "left": 16, "bottom": 250, "width": 100, "height": 10,
             "content": "attendee_name", "fontsize": 13, "fontfamily": "Open Sans",
             "bold": true, "italic": false, "align": "left", "verticalalign": "middle",
             "color": [0, 0, 0, 1], "autoresize": true},
            {"type": "textarea", "left": 16, "bottom": 200, "width": 100, "content": "other",
             "text": "Hall 1 - Entrance B", "fontsize": 10, "fontfamily": "Nope",
             "bold": false, "italic": true, "align": "right", "color": [200, 0, 0],
             "rotation": 90},
            {"type": "poweredby", "left": 88, "bottom": 10, "size": 20, "content": "dark"},
            {"type": "imagearea", "left": 10, "bottom": 10, "width": 20, "height": 20,
             "content": "x"}
        ]))
        .expect("valid");
        let prepared = Prepared::new(layout, None, (210.0, 297.0));
        let pdf = prepared.render(&[&Ticket("Jiří Dvořák"), &Ticket("山田太郎")], "Tickets");
        assert!(pdf.starts_with(b"%PDF-"));
        if let Ok(dir) = std::env::var("TESSERA_PDF_OUT") {
            std::fs::write(format!("{dir}/render-test.pdf"), &pdf).expect("written");
        }
        let text = String::from_utf8_lossy(&pdf);
        let pages = text.matches("/Type /Page").count() - text.matches("/Type /Pages").count();
        assert_eq!(pages, 2);
    }
}
