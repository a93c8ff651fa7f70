//! A layout's background: the pages of a PDF made by any tool, brought in once as forms the
//! rendered pages draw underneath their areas.

use hayro_write::hayro_syntax::Pdf as SourcePdf;
use hayro_write::{ExtractionQuery, extract};
use pdf_writer::{Chunk, Ref};

use super::layout::MAX_PAGE;

/// A background read and converted.
#[derive(Clone)]
pub struct Background {
    /// Each page's size in points.
    pub sizes: Vec<(f32, f32)>,
    /// The forms, one a page, and what they use.
    pub(super) chunk: Chunk,
    /// The form of each page.
    pub(super) forms: Vec<Ref>,
    /// The first ref the chunk leaves free.
    pub(super) first_free: i32,
}

impl std::fmt::Debug for Background {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Background({} pages)", self.sizes.len())
    }
}

impl Background {
    /// Reads a PDF's first pages (at most [`MAX_PAGE`]); an error says what is wrong with
    /// it.
    pub fn from_pdf(data: Vec<u8>) -> Result<Background, String> {
        let source =
            SourcePdf::new(data).map_err(|e| format!("The file is not a readable PDF ({e:?})."))?;
        let pages = source.pages();
        let count = pages.len().min(MAX_PAGE as usize);
        if count == 0 {
            return Err("The PDF has no pages.".into());
        }
        let sizes = (0..count)
            .map(|i| pages[i].render_dimensions())
            .collect::<Vec<_>>();
        if sizes
            .iter()
            .any(|(w, h)| !(1.0..=14_400.0).contains(w) || !(1.0..=14_400.0).contains(h))
        {
            return Err("A page of the PDF has no usable size.".into());
        }
        let queries: Vec<ExtractionQuery> = (0..count).map(ExtractionQuery::new_xobject).collect();
        let mut next = Ref::new(1);
        let extracted = extract(
            &source,
            Box::new(|| next.bump()),
            Default::default(),
            |group| {
                group.color_space().device_rgb();
            },
            &queries,
        )
        .map_err(|e| format!("The PDF's pages cannot be read ({e:?})."))?;
        let forms = extracted
            .root_refs
            .into_iter()
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("The PDF's pages cannot be read ({e:?})."))?;
        Ok(Background {
            sizes,
            chunk: extracted.chunk,
            forms,
            first_free: next.get(),
        })
    }
}
