//! Pictures an image area shows (an attendee's photo on a badge): a JPEG goes into the file
//! as it is, a PNG as its pixels with its transparency as a soft mask. Anything else, or a
//! picture too large, is not a picture: the area shows pretix's grey placeholder.

use std::io::Cursor;

use pdf_writer::{Filter, Finish, Pdf, Ref};

use super::writer::deflate;

/// The most pixels a picture may have (a 24-megapixel photo), which bounds the memory its
/// pixels take when decoded.
const MAX_PIXELS: u64 = 24_000_000;

/// A picture ready to be written.
#[derive(Debug, Clone)]
pub struct Image {
    width: u32,
    height: u32,
    pixels: Pixels,
}

#[derive(Debug, Clone)]
enum Pixels {
    /// A JPEG file of this many colour components (1 grey, 3 RGB, 4 CMYK).
    Jpeg { file: Vec<u8>, components: u8 },
    /// Deflated 8-bit RGB, and deflated 8-bit alpha when some pixel is not opaque.
    Rgb {
        rgb: Vec<u8>,
        alpha: Option<Vec<u8>>,
    },
}

impl Image {
    /// Reads a JPEG or PNG file; `None` for any other, a broken one or one of more than
    /// [`MAX_PIXELS`].
    pub fn read(file: &[u8]) -> Option<Image> {
        if file.starts_with(&[0xFF, 0xD8]) {
            Self::jpeg(file)
        } else if file.starts_with(b"\x89PNG") {
            Self::png(file)
        } else {
            None
        }
    }

    fn jpeg(file: &[u8]) -> Option<Image> {
        let mut decoder = zune_jpeg::JpegDecoder::new(zune_core::bytestream::ZCursor::new(file));
        decoder.decode_headers().ok()?;
        let info = decoder.info()?;
        let (width, height) = (u32::from(info.width), u32::from(info.height));
        if !matches!(info.components, 1 | 3 | 4) || !fits(width, height) {
            return None;
        }
        Some(Image {
            width,
            height,
            pixels: Pixels::Jpeg {
                file: file.to_vec(),
                components: info.components,
            },
        })
    }

    fn png(file: &[u8]) -> Option<Image> {
        let limits = png::Limits {
            bytes: usize::try_from(MAX_PIXELS * 4).ok()?,
        };
        let mut decoder = png::Decoder::new_with_limits(Cursor::new(file), limits);
        decoder.set_transformations(png::Transformations::EXPAND | png::Transformations::STRIP_16);
        let mut reader = decoder.read_info().ok()?;
        let mut buffer = vec![0; reader.output_buffer_size()?];
        let frame = reader.next_frame(&mut buffer).ok()?;
        if !fits(frame.width, frame.height) {
            return None;
        }
        let pixels = buffer.get(..frame.buffer_size())?;
        let channels = frame.color_type.samples();
        let count = (frame.width * frame.height) as usize;
        let mut rgb = Vec::with_capacity(count * 3);
        let mut alpha = Vec::with_capacity(count);
        for px in pixels.chunks_exact(channels) {
            match px {
                [g] => rgb.extend([*g, *g, *g]),
                [g, a] => {
                    rgb.extend([*g, *g, *g]);
                    alpha.push(*a);
                }
                [r, g, b] => rgb.extend([*r, *g, *b]),
                [r, g, b, a] => {
                    rgb.extend([*r, *g, *b]);
                    alpha.push(*a);
                }
                _ => return None,
            }
        }
        let translucent = alpha.iter().any(|a| *a != u8::MAX);
        Some(Image {
            width: frame.width,
            height: frame.height,
            pixels: Pixels::Rgb {
                rgb: deflate(&rgb),
                alpha: translucent.then(|| deflate(&alpha)),
            },
        })
    }

    /// Width over height.
    pub fn aspect(&self) -> f32 {
        self.width as f32 / self.height as f32
    }

    /// Writes the picture as an image object at `id`, its mask (if any) at the next ref.
    pub(super) fn write(&self, pdf: &mut Pdf, id: Ref, next: &mut Ref) {
        let (width, height) = (self.width as i32, self.height as i32);
        match &self.pixels {
            Pixels::Jpeg { file, components } => {
                let mut image = pdf.image_xobject(id, file);
                image.filter(Filter::DctDecode);
                image.width(width).height(height).bits_per_component(8);
                match components {
                    1 => image.color_space().device_gray(),
                    4 => image.color_space().device_cmyk(),
                    _ => image.color_space().device_rgb(),
                };
            }
            Pixels::Rgb { rgb, alpha } => {
                let mask = alpha.as_ref().map(|a| (next.bump(), a));
                let mut image = pdf.image_xobject(id, rgb);
                image.filter(Filter::FlateDecode);
                image.width(width).height(height).bits_per_component(8);
                image.color_space().device_rgb();
                if let Some((mask_id, _)) = mask {
                    image.s_mask(mask_id);
                }
                image.finish();
                if let Some((mask_id, alpha)) = mask {
                    let mut soft = pdf.image_xobject(mask_id, alpha);
                    soft.filter(Filter::FlateDecode);
                    soft.width(width).height(height).bits_per_component(8);
                    soft.color_space().device_gray();
                }
            }
        }
    }
}

fn fits(width: u32, height: u32) -> bool {
    width > 0 && height > 0 && u64::from(width) * u64::from(height) <= MAX_PIXELS
}
