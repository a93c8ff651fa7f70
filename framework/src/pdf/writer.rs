//! Writes a PDF of pages drawn with paths, forms and text in the built-in faces. Text is
//! real text: each face used is embedded as a subset of the glyphs set, with a map back to
//! the characters so that the text can be searched and copied.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, LazyLock, Mutex};

use flate2::{Compress, Compression, FlushCompress, Status};
use pdf_writer::types::{
    AssociationKind, CidFontType, FontFlags, OutputIntentSubtype, SystemInfo, UnicodeCmap,
};
use pdf_writer::{Chunk, Content, Date, Filter, Finish, Name, Pdf, Rect, Ref, Str, TextStr};
use subsetter::GlyphRemapper;

use super::fonts::{FaceId, glyph_for};
use super::image::Image;

/// A page written so far.
struct PageOut {
    width: f32,
    height: f32,
    content: Vec<u8>,
    forms: Vec<Ref>,
    /// The pictures drawn, by their number in the document.
    images: Vec<usize>,
}

/// The glyphs of one face used in the document, numbered as in its subset.
#[derive(Default, Clone)]
struct FontUse {
    glyphs: GlyphRemapper,
    chars: BTreeMap<u16, char>,
}

impl FontUse {
    /// A face's use before any text is set: for the text faces, the printable ASCII
    /// characters come first, in code order, so that documents whose text is all ASCII
    /// (most tickets: codes, secrets, prices, Latin names) have the same subset, which is
    /// then made once ([`subset_of`]); other characters follow in the order they are set.
    fn start(face: FaceId) -> Self {
        static SEEDED: LazyLock<Vec<FontUse>> = LazyLock::new(|| {
            FaceId::ALL
                .iter()
                .map(|&face| {
                    let mut used = FontUse::default();
                    if face != FaceId::Fallback {
                        for c in ' '..='~' {
                            if let Some(glyph) = face.face().glyph(c) {
                                let new = used.glyphs.remap(glyph);
                                used.chars.entry(new).or_insert(c);
                            }
                        }
                    }
                    used
                })
                .collect()
        });
        SEEDED[face as usize].clone()
    }
}

/// Fonts kept, by face, glyphs and characters, before they are all forgotten.
const FONTS_KEPT: usize = 256;

/// What a document embeds of a face for the glyphs it sets, deflated.
struct KeptFont {
    /// The subset; `None` if the face cannot be subset.
    file: Option<Vec<u8>>,
    /// The map from the subset's glyphs back to the characters.
    to_unicode: Vec<u8>,
}

/// The embedded parts of a face with these glyphs and characters, made once for each such
/// use. Made once and sent with every ticket that sets the same characters (all those whose
/// text is ASCII, see [`FontUse::start`]), they are compressed well rather than quickly.
fn kept_font(face: FaceId, used: &FontUse) -> Arc<KeptFont> {
    type Key = (FaceId, Vec<u16>, Vec<(u16, char)>);
    static FONTS: LazyLock<Mutex<HashMap<Key, Arc<KeptFont>>>> = LazyLock::new(Mutex::default);
    let key = (
        face,
        used.glyphs.remapped_gids().collect::<Vec<u16>>(),
        used.chars.iter().map(|(g, c)| (*g, *c)).collect::<Vec<_>>(),
    );
    if let Some(kept) = FONTS.lock().ok().and_then(|m| m.get(&key).cloned()) {
        return kept;
    }
    let mut cmap = UnicodeCmap::new(
        Name(b"Custom"),
        SystemInfo {
            registry: Str(b"Adobe"),
            ordering: Str(b"UCS"),
            supplement: 0,
        },
    );
    for (glyph, c) in &used.chars {
        cmap.pair(*glyph, *c);
    }
    let made = Arc::new(KeptFont {
        file: subsetter::subset(face.face().data, 0, &used.glyphs)
            .ok()
            .map(|subset| deflate_with(&subset, Compression::default())),
        to_unicode: deflate_with(&cmap.finish(), Compression::default()),
    });
    if let Ok(mut kept) = FONTS.lock() {
        if kept.len() >= FONTS_KEPT {
            kept.clear();
        }
        kept.insert(key, made.clone());
    }
    made
}

/// A document being drawn, one page at a time.
pub struct Writer {
    pages: Vec<PageOut>,
    current: Option<PageOut>,
    content: Content,
    fonts: [Option<FontUse>; 5],
    images: Vec<Arc<Image>>,
}

impl Default for Writer {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Writer({} pages)", self.pages.len())
    }
}

/// Names of the font resources, by face number.
const FONT_NAMES: [&[u8]; 5] = [b"F0", b"F1", b"F2", b"F3", b"F4"];

/// The resource name of the `i`th form of a page.
fn form_name(i: usize) -> String {
    format!("X{i}")
}

/// The resource name of the document's `n`th picture.
fn image_name(n: usize) -> String {
    format!("I{n}")
}

impl Writer {
    /// An empty document.
    pub fn new() -> Self {
        Writer {
            pages: Vec::new(),
            current: None,
            content: Content::new(),
            fonts: Default::default(),
            images: Vec::new(),
        }
    }

    /// Starts a page of this size in points; the one before it is done.
    pub fn start_page(&mut self, width: f32, height: f32) {
        self.end_page();
        self.current = Some(PageOut {
            width,
            height,
            content: Vec::new(),
            forms: Vec::new(),
            images: Vec::new(),
        });
    }

    fn end_page(&mut self) {
        if let Some(mut page) = self.current.take() {
            let content = std::mem::replace(&mut self.content, Content::new());
            page.content = content.finish().into_vec();
            self.pages.push(page);
        }
    }

    /// The current page's content stream, for colours, paths and transformations.
    pub fn content(&mut self) -> &mut Content {
        &mut self.content
    }

    /// Draws a form (an object of the prelude given to [`Writer::finish`]) with the current
    /// transformation.
    pub fn draw_form(&mut self, form: Ref) {
        let Some(page) = self.current.as_mut() else {
            return;
        };
        let index = match page.forms.iter().position(|f| *f == form) {
            Some(i) => i,
            None => {
                page.forms.push(form);
                page.forms.len() - 1
            }
        };
        self.content.x_object(Name(form_name(index).as_bytes()));
    }

    /// Draws a picture into the unit square of the current transformation; a picture drawn
    /// more than once is written once.
    pub fn draw_image(&mut self, image: &Arc<Image>) {
        let Some(page) = self.current.as_mut() else {
            return;
        };
        let number = match self.images.iter().position(|i| Arc::ptr_eq(i, image)) {
            Some(n) => n,
            None => {
                self.images.push(image.clone());
                self.images.len() - 1
            }
        };
        if !page.images.contains(&number) {
            page.images.push(number);
        }
        self.content.x_object(Name(image_name(number).as_bytes()));
    }

    /// Sets a line of text with its baseline starting at `(x, y)` in points, in the style's
    /// face and, for characters it lacks, the fallback face.
    pub fn text(&mut self, style: FaceId, size: f32, x: f32, y: f32, text: &str) {
        let mut x = x;
        let mut run: Vec<u8> = Vec::new();
        let mut run_face = None;
        let mut run_x = x;
        self.content.begin_text();
        for c in text.chars() {
            let (face, glyph) = glyph_for(style, c);
            if run_face != Some(face) {
                if let Some(f) = run_face {
                    self.show(f, size, run_x, y, &run);
                }
                run.clear();
                run_face = Some(face);
                run_x = x;
            }
            let used = self.fonts[face as usize].get_or_insert_with(|| FontUse::start(face));
            let new = used.glyphs.remap(glyph);
            if glyph != 0 {
                used.chars.entry(new).or_insert(c);
            }
            run.extend_from_slice(&new.to_be_bytes());
            x += face.face().advance(glyph) * size / 1000.0;
        }
        if let Some(f) = run_face {
            self.show(f, size, run_x, y, &run);
        }
        self.content.end_text();
    }

    fn show(&mut self, face: FaceId, size: f32, x: f32, y: f32, glyphs: &[u8]) {
        self.content
            .set_font(Name(FONT_NAMES[face as usize]), size)
            .set_text_matrix([1.0, 0.0, 0.0, 1.0, x, y])
            .show(Str(glyphs));
    }

    /// The finished file. `prelude` holds objects the pages draw (their refs below
    /// `first_free`, the first ref it leaves free).
    pub fn finish(self, prelude: Option<&Chunk>, first_free: i32, title: &str) -> Vec<u8> {
        self.finish_with(prelude, first_free, title, &Extras::default())
    }

    /// The finished file, as [`Writer::finish`], carrying `extras` too: what an archival
    /// (PDF/A) file needs beside its pages. With no extras, the same file as `finish`.
    pub fn finish_with(
        mut self,
        prelude: Option<&Chunk>,
        first_free: i32,
        title: &str,
        extras: &Extras<'_>,
    ) -> Vec<u8> {
        self.end_page();
        let mut next = Ref::new(first_free.max(1));
        let mut pdf = Pdf::new();
        if let Some(chunk) = prelude {
            pdf.extend(chunk);
        }
        let catalog = next.bump();
        let tree = next.bump();
        let info = next.bump();
        let fonts: Vec<(FaceId, Ref)> = FaceId::ALL
            .iter()
            .filter(|f| self.fonts[**f as usize].is_some())
            .map(|f| (*f, next.bump()))
            .collect();
        let image_refs: Vec<Ref> = self.images.iter().map(|_| next.bump()).collect();
        let page_refs: Vec<(Ref, Ref)> = self
            .pages
            .iter()
            .map(|_| (next.bump(), next.bump()))
            .collect();
        let extra_refs = ExtraRefs::bump(extras, &mut next);
        let mut cat = pdf.catalog(catalog);
        cat.pages(tree);
        extra_refs.catalog(extras, &mut cat);
        cat.finish();
        pdf.pages(tree)
            .kids(page_refs.iter().map(|(p, _)| *p))
            .count(page_refs.len() as i32);
        let mut doc_info = pdf.document_info(info);
        doc_info.title(TextStr(title)).producer(TextStr(PRODUCER));
        if let Some(date) = extras.date {
            doc_info.creation_date(date).modified_date(date);
        }
        doc_info.finish();
        extra_refs.write(extras, &mut pdf);
        for (page, (page_ref, content_ref)) in self.pages.iter().zip(&page_refs) {
            let mut p = pdf.page(*page_ref);
            p.parent(tree)
                .media_box(Rect::new(0.0, 0.0, page.width, page.height))
                .contents(*content_ref);
            let mut resources = p.resources();
            if !fonts.is_empty() {
                let mut dict = resources.fonts();
                for (face, font_ref) in &fonts {
                    dict.pair(Name(FONT_NAMES[*face as usize]), *font_ref);
                }
            }
            if !page.forms.is_empty() || !page.images.is_empty() {
                let mut dict = resources.x_objects();
                for (i, form) in page.forms.iter().enumerate() {
                    dict.pair(Name(form_name(i).as_bytes()), *form);
                }
                for n in &page.images {
                    dict.pair(Name(image_name(*n).as_bytes()), image_refs[*n]);
                }
            }
            resources.finish();
            p.finish();
            pdf.stream(*content_ref, &deflate(&page.content))
                .filter(Filter::FlateDecode);
        }
        for (face, font_ref) in fonts {
            if let Some(used) = self.fonts[face as usize].take() {
                write_font(&mut pdf, &mut next, face, font_ref, &used);
            }
        }
        for (image, id) in self.images.iter().zip(image_refs) {
            image.write(&mut pdf, id, &mut next);
        }
        pdf.finish()
    }
}

/// The producer a document's information names (and, in an archival file, its metadata).
pub const PRODUCER: &str = "Tessera";

/// A file carried inside a document and associated with it, as PDF/A-3 allows (e.g. the
/// XML of a hybrid invoice).
#[derive(Debug, Clone, Copy)]
pub struct Attachment<'a> {
    /// Its file name.
    pub name: &'a str,
    /// What it is, for people.
    pub description: &'a str,
    /// Its media type, e.g. `text/xml`.
    pub media_type: &'a str,
    /// How it relates to the document.
    pub relationship: AssociationKind,
    /// The file.
    pub data: &'a [u8],
    /// When it last changed.
    pub modified: Date,
}

/// The colour profile of the device the document is meant for: PDF/A's output intent,
/// which gives the document's device colours a meaning.
#[derive(Debug, Clone, Copy)]
pub struct OutputProfile<'a> {
    /// The ICC profile, deflated.
    pub deflated: &'a [u8],
    /// Its number of colour components (3 for RGB).
    pub components: i32,
    /// The output condition it stands for, e.g. `sRGB IEC61966-2.1`.
    pub condition: &'a str,
}

/// What a finished document carries beside its pages and title: the parts an archival
/// (PDF/A) file needs. The default carries nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Extras<'a> {
    /// The XMP metadata packet, written unfiltered as PDF/A asks.
    pub metadata: Option<&'a [u8]>,
    /// The output intent.
    pub output_intent: Option<OutputProfile<'a>>,
    /// Files carried inside, each listed among the embedded files and the document's
    /// associated files.
    pub attachments: &'a [Attachment<'a>],
    /// The file identifier of the trailer: the document's, and this version's.
    pub id: Option<[[u8; 16]; 2]>,
    /// When the document was made (its information's creation and modification dates).
    pub date: Option<Date>,
    /// The language of its text, e.g. `de`.
    pub lang: Option<&'a str>,
}

/// The objects of a document's extras.
struct ExtraRefs {
    metadata: Option<Ref>,
    profile: Option<Ref>,
    /// Each attachment's file specification and stream.
    attachments: Vec<(Ref, Ref)>,
}

impl ExtraRefs {
    /// Numbers the extras' objects from `next` (none without extras).
    fn bump(extras: &Extras<'_>, next: &mut Ref) -> Self {
        ExtraRefs {
            metadata: extras.metadata.map(|_| next.bump()),
            profile: extras.output_intent.map(|_| next.bump()),
            attachments: extras
                .attachments
                .iter()
                .map(|_| (next.bump(), next.bump()))
                .collect(),
        }
    }

    /// Writes the catalog's entries for the extras.
    fn catalog(&self, extras: &Extras<'_>, cat: &mut pdf_writer::writers::Catalog<'_>) {
        if let Some(lang) = extras.lang {
            cat.lang(TextStr(lang));
        }
        if let Some(metadata) = self.metadata {
            cat.metadata(metadata);
        }
        if let (Some(profile), Some(intent)) = (self.profile, extras.output_intent) {
            cat.output_intents()
                .push()
                .subtype(OutputIntentSubtype::PDFA)
                .output_condition_identifier(TextStr(intent.condition))
                .info(TextStr(intent.condition))
                .dest_output_profile(profile);
        }
        if self.attachments.is_empty() {
            return;
        }
        // A name tree lists its keys in order.
        let mut named: Vec<(&str, Ref)> = extras
            .attachments
            .iter()
            .zip(&self.attachments)
            .map(|(a, (spec, _))| (a.name, *spec))
            .collect();
        named.sort_by(|a, b| a.0.cmp(b.0));
        {
            let mut names = cat.names();
            let mut files = names.embedded_files();
            let mut entries = files.names();
            for (name, spec) in &named {
                entries.insert(Str(name.as_bytes()), *spec);
            }
        }
        cat.insert(Name(b"AF"))
            .array()
            .items(self.attachments.iter().map(|(spec, _)| *spec));
    }

    /// Writes the extras' objects.
    fn write(&self, extras: &Extras<'_>, pdf: &mut Pdf) {
        if let Some([first, this]) = extras.id {
            pdf.set_file_id((first.to_vec(), this.to_vec()));
        }
        if let (Some(id), Some(metadata)) = (self.metadata, extras.metadata) {
            pdf.metadata(id, metadata);
        }
        if let (Some(id), Some(intent)) = (self.profile, extras.output_intent) {
            pdf.icc_profile(id, intent.deflated)
                .n(intent.components)
                .filter(Filter::FlateDecode);
        }
        for (a, (spec_ref, file_ref)) in extras.attachments.iter().zip(&self.attachments) {
            let mut spec = pdf.file_spec(*spec_ref);
            spec.path(Str(a.name.as_bytes()))
                .unic_file(TextStr(a.name))
                .description(TextStr(a.description))
                .association_kind(a.relationship);
            spec.insert(Name(b"EF"))
                .dict()
                .pair(Name(b"F"), *file_ref)
                .pair(Name(b"UF"), *file_ref);
            spec.finish();
            let deflated = deflate(a.data);
            let mut file = pdf.embedded_file(*file_ref, &deflated);
            file.subtype(Name(a.media_type.as_bytes()));
            file.filter(Filter::FlateDecode);
            file.params()
                .size(i32::try_from(a.data.len()).unwrap_or(i32::MAX))
                .modification_date(a.modified);
        }
    }
}

/// Compresses a stream, quickly: documents are made while people wait.
pub fn deflate(data: &[u8]) -> Vec<u8> {
    deflate_with(data, Compression::fast())
}

/// Compresses a stream at this level. Each thread keeps one compressor a level and resets
/// it, since making one clears a few hundred kilobytes of tables, more work than
/// compressing a page of a ticket.
fn deflate_with(data: &[u8], level: Compression) -> Vec<u8> {
    thread_local! {
        static COMPRESSORS: std::cell::RefCell<HashMap<u32, Compress>> =
            std::cell::RefCell::default();
    }
    COMPRESSORS.with_borrow_mut(|compressors| {
        let compressor = compressors
            .entry(level.level())
            .or_insert_with(|| Compress::new(level, true));
        compressor.reset();
        let mut out = Vec::with_capacity(data.len() / 2 + 64);
        loop {
            let read = usize::try_from(compressor.total_in()).unwrap_or(data.len());
            let rest = data.get(read..).unwrap_or_default();
            match compressor.compress_vec(rest, &mut out, FlushCompress::Finish) {
                Ok(Status::StreamEnd) | Err(_) => break,
                Ok(Status::Ok | Status::BufError) => out.reserve(out.capacity().max(64)),
            }
        }
        out
    })
}

/// The six capital letters naming a subset, from the glyphs it holds.
fn subset_tag(glyphs: &GlyphRemapper) -> String {
    let mut hash: u32 = 2_166_136_261;
    for g in glyphs.remapped_gids() {
        for b in g.to_be_bytes() {
            hash = (hash ^ u32::from(b)).wrapping_mul(16_777_619);
        }
    }
    (0..6)
        .map(|i| char::from(b'A' + ((hash >> (i * 5)) % 26) as u8))
        .collect()
}

/// Writes a face's subset as a Type 0 font with its descendant, descriptor, file and map
/// back to the characters.
fn write_font(pdf: &mut Pdf, next: &mut Ref, face_id: FaceId, font_ref: Ref, used: &FontUse) {
    let face = face_id.face();
    let (cid_ref, descriptor_ref, file_ref, cmap_ref) =
        (next.bump(), next.bump(), next.bump(), next.bump());
    let name = format!("{}+{}", subset_tag(&used.glyphs), face.postscript_name);
    let name = Name(name.as_bytes());
    pdf.type0_font(font_ref)
        .base_font(name)
        .encoding_predefined(Name(b"Identity-H"))
        .descendant_font(cid_ref)
        .to_unicode(cmap_ref);
    let mut cid = pdf.cid_font(cid_ref);
    cid.subtype(CidFontType::Type2)
        .base_font(name)
        .system_info(SystemInfo {
            registry: Str(b"Adobe"),
            ordering: Str(b"Identity"),
            supplement: 0,
        })
        .font_descriptor(descriptor_ref)
        .default_width(0.0)
        .cid_to_gid_map_predefined(Name(b"Identity"));
    let widths: Vec<f32> = used
        .glyphs
        .remapped_gids()
        .map(|g| face.advance(g))
        .collect();
    cid.widths().consecutive(0, widths);
    cid.finish();
    let m = &face.metrics;
    let bbox = m.bounds.map_or(Rect::new(0.0, 0.0, 1000.0, 1000.0), |b| {
        Rect::new(
            face.per_mille(b.x_min),
            face.per_mille(b.y_min),
            face.per_mille(b.x_max),
            face.per_mille(b.y_max),
        )
    });
    let mut flags = if face_id == FaceId::Fallback {
        FontFlags::SYMBOLIC
    } else {
        FontFlags::NON_SYMBOLIC
    };
    if face.italic {
        flags |= FontFlags::ITALIC;
    }
    // The built-in faces subset (a test sets text in each); were one ever to fail, the text
    // stays in the file, shown with a fallback font by readers.
    let kept = kept_font(face_id, used);
    let mut descriptor = pdf.font_descriptor(descriptor_ref);
    descriptor
        .name(name)
        .flags(flags)
        .bbox(bbox)
        .italic_angle(m.italic_angle)
        .ascent(face.per_mille(m.ascent))
        .descent(face.per_mille(m.descent))
        .cap_height(face.per_mille(m.cap_height.unwrap_or(m.ascent)))
        .stem_v(80.0);
    if kept.file.is_some() {
        descriptor.font_file2(file_ref);
    }
    descriptor.finish();
    if let Some(file) = &kept.file {
        pdf.stream(file_ref, file).filter(Filter::FlateDecode);
    }
    pdf.cmap(cmap_ref, &kept.to_unicode)
        .filter(Filter::FlateDecode);
}
