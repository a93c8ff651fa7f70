//! Layouts as pretix writes them: a JSON list of areas (text, QR code, image, "powered
//! by") placed in millimetres from a page's bottom-left corner. Reading one checks it the way
//! pretix's schema does, and bounds what a render of it can cost.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::fonts::FaceId;

/// The most areas a layout holds.
pub const MAX_AREAS: usize = 200;
/// The highest page an area may name.
pub const MAX_PAGE: u32 = 20;
/// The longest text an area carries, in characters.
pub const MAX_TEXT: usize = 5_000;
/// How far from the corner an area may be placed, in millimetres.
const MAX_MM: f64 = 5_000.0;

/// A layout read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// Its areas, in the order they are drawn.
    pub areas: Vec<Area>,
}

/// One area of a layout.
#[derive(Debug, Clone, PartialEq)]
pub struct Area {
    /// The page it is on, from 1.
    pub page: u32,
    /// Distance of its left edge from the page's, in millimetres.
    pub left: f32,
    /// Distance of its bottom edge from the page's, in millimetres.
    pub bottom: f32,
    /// What it draws.
    pub kind: AreaKind,
}

/// What an area draws.
#[derive(Debug, Clone, PartialEq)]
pub enum AreaKind {
    /// A QR code, `size` millimetres square.
    Barcode {
        /// Side of the square, in millimetres.
        size: f32,
        /// What it encodes.
        source: Source,
        /// Without the quiet zone of four modules around it.
        no_whitespace: bool,
        /// Colour of the dark modules.
        color: [u8; 3],
    },
    /// Text: pretix's `textarea` and `textcontainer`.
    Text(Box<TextArea>),
    /// An image variable, fitted into the box.
    Image {
        /// Width in millimetres.
        width: f32,
        /// Height in millimetres.
        height: f32,
        /// The image variable's name.
        content: String,
    },
    /// A "powered by" mark, `size` millimetres wide.
    PoweredBy {
        /// Width in millimetres.
        size: f32,
        /// Light text for dark backgrounds.
        white: bool,
    },
}

/// Where an area's text comes from.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Source {
    /// A variable's name, `meta:<name>`, `itemmeta:<name>`, `other` or `other_i18n`.
    pub content: String,
    /// The text of `other`.
    pub text: String,
    /// The texts of `other_i18n`, by language.
    pub text_i18n: BTreeMap<String, String>,
    /// The language the area is rendered in, instead of the order's.
    pub locale: Option<String>,
}

/// Horizontal alignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Flush left.
    Left,
    /// Centred.
    Center,
    /// Flush right.
    Right,
}

/// Vertical alignment in a container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerticalAlign {
    /// From the top.
    Top,
    /// Centred.
    Middle,
    /// At the bottom.
    Bottom,
}

/// A text area.
#[derive(Debug, Clone, PartialEq)]
pub struct TextArea {
    /// Its text.
    pub source: Source,
    /// Width in millimetres.
    pub width: f32,
    /// A container's height in millimetres; `None` for a legacy `textarea`, which grows.
    pub height: Option<f32>,
    /// Font size in points.
    pub font_size: f32,
    /// Line height as a factor of the font size, as given (`None`: pretix's legacy leading).
    pub line_height: Option<f32>,
    /// The face: Open Sans in the weight and slant asked for (any family is set in it).
    pub face: FaceId,
    /// Horizontal alignment.
    pub align: Align,
    /// Vertical alignment (containers).
    pub vertical_align: VerticalAlign,
    /// Colour.
    pub color: [u8; 3],
    /// Clockwise rotation in degrees.
    pub rotation: f32,
    /// Shrinks the font until the text fits (containers).
    pub autoresize: bool,
    /// Breaks words longer than a line.
    pub split_long_words: bool,
    /// A legacy area whose top edge is at `bottom`.
    pub downward: bool,
}

/// Why a layout was refused: which area and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutError(pub String);

impl std::fmt::Display for LayoutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The keys each type of area may have (pretix's schema), the required ones first.
const KEYS: [(&str, &[&str], &[&str]); 5] = [
    (
        "barcodearea",
        &["left", "bottom", "size"],
        &[
            "page",
            "content",
            "text",
            "text_i18n",
            "nowhitespace",
            "color",
        ],
    ),
    (
        "imagearea",
        &["left", "bottom", "content", "width", "height"],
        &["page"],
    ),
    (
        "textcontainer",
        &[
            "left",
            "bottom",
            "content",
            "width",
            "height",
            "fontsize",
            "fontfamily",
            "bold",
            "italic",
            "align",
            "verticalalign",
            "color",
        ],
        &[
            "page",
            "text",
            "text_i18n",
            "locale",
            "lineheight",
            "autoresize",
            "splitlongwords",
            "rotation",
        ],
    ),
    (
        "textarea",
        &[
            "left",
            "bottom",
            "content",
            "width",
            "fontsize",
            "fontfamily",
            "bold",
            "italic",
            "align",
            "color",
        ],
        &[
            "page",
            "text",
            "text_i18n",
            "locale",
            "lineheight",
            "downward",
            "rotation",
        ],
    ),
    (
        "poweredby",
        &["left", "bottom", "content", "size"],
        &["page"],
    ),
];

impl Layout {
    /// Reads a layout, or says which area is wrong and why.
    pub fn parse(value: &Value) -> Result<Layout, LayoutError> {
        let list = value
            .as_array()
            .ok_or_else(|| LayoutError("A layout is a list of areas.".into()))?;
        if list.len() > MAX_AREAS {
            return Err(LayoutError(format!(
                "A layout has at most {MAX_AREAS} areas."
            )));
        }
        let areas = list
            .iter()
            .enumerate()
            .map(|(i, v)| area(v).map_err(|e| LayoutError(format!("Area {}: {e}", i + 1))))
            .collect::<Result<_, _>>()?;
        Ok(Layout { areas })
    }
}

/// Reads one area.
fn area(value: &Value) -> Result<Area, String> {
    let o = value
        .as_object()
        .ok_or("an area is an object with a \"type\".")?;
    let kind = o
        .get("type")
        .and_then(Value::as_str)
        .ok_or("\"type\" is missing.")?;
    let Some((_, required, optional)) = KEYS.iter().find(|(t, ..)| *t == kind) else {
        return Err(format!(
            "({kind}) is no type of area; use barcodearea, imagearea, textcontainer, textarea or poweredby."
        ));
    };
    let named = |e: String| format!("({kind}) {e}");
    for key in o.keys() {
        if key != "type" && !required.contains(&key.as_str()) && !optional.contains(&key.as_str()) {
            return Err(named(format!("\"{key}\" is not a property of this type.")));
        }
    }
    for key in *required {
        if !o.contains_key(*key) {
            return Err(named(format!("\"{key}\" is required.")));
        }
    }
    let r = Reader(o);
    let page = match o.get("page") {
        None | Some(Value::Null) => 1,
        Some(v) => match v.as_f64() {
            Some(p) if p.fract() == 0.0 && (1.0..=f64::from(MAX_PAGE)).contains(&p) => p as u32,
            _ => {
                return Err(named(format!(
                    "\"page\" must be a whole number from 1 to {MAX_PAGE}."
                )));
            }
        },
    };
    let left = r.number("left", -MAX_MM, MAX_MM).map_err(named)?;
    let bottom = r.number("bottom", -MAX_MM, MAX_MM).map_err(named)?;
    let kind = match kind {
        "barcodearea" => AreaKind::Barcode {
            size: r.number("size", 0.0, MAX_MM).map_err(named)?,
            source: r.source().map_err(named)?,
            no_whitespace: r.flag("nowhitespace").map_err(named)?,
            color: r.color().map_err(named)?,
        },
        "imagearea" => AreaKind::Image {
            width: r.number("width", 0.0, MAX_MM).map_err(named)?,
            height: r.number("height", 0.0, MAX_MM).map_err(named)?,
            content: r.text("content").map_err(named)?,
        },
        "poweredby" => AreaKind::PoweredBy {
            size: r.number("size", 0.0, MAX_MM).map_err(named)?,
            white: match r.text("content").map_err(named)?.as_str() {
                "dark" => false,
                "white" => true,
                _ => return Err(named("\"content\" must be \"dark\" or \"white\".".into())),
            },
        },
        container => AreaKind::Text(Box::new(text_area(&r, container == "textcontainer")?)),
    };
    Ok(Area {
        page,
        left,
        bottom,
        kind,
    })
}

/// Reads a text area's own properties.
fn text_area(r: &Reader<'_>, container: bool) -> Result<TextArea, String> {
    let kind = if container {
        "textcontainer"
    } else {
        "textarea"
    };
    let named = |e: String| format!("({kind}) {e}");
    let family = r.text("fontfamily").map_err(named)?;
    if family.chars().count() > 200 {
        return Err(named("\"fontfamily\" is too long.".into()));
    }
    let align = match r.text("align").map_err(named)?.as_str() {
        "left" => Align::Left,
        "center" => Align::Center,
        "right" => Align::Right,
        _ => {
            return Err(named(
                "\"align\" must be \"left\", \"center\" or \"right\".".into(),
            ));
        }
    };
    let vertical_align = match r.0.get("verticalalign").and_then(Value::as_str) {
        None if !container => VerticalAlign::Top,
        Some("top") => VerticalAlign::Top,
        Some("middle") => VerticalAlign::Middle,
        Some("bottom") => VerticalAlign::Bottom,
        _ => {
            return Err(named(
                "\"verticalalign\" must be \"top\", \"middle\" or \"bottom\".".into(),
            ));
        }
    };
    Ok(TextArea {
        source: r.source().map_err(named)?,
        width: r.number("width", 0.0, MAX_MM).map_err(named)?,
        height: if container {
            Some(r.number("height", 0.0, MAX_MM).map_err(named)?)
        } else {
            None
        },
        font_size: r.number("fontsize", 0.0, 1_000.0).map_err(named)?,
        line_height: r.optional_number("lineheight", 0.0, 100.0).map_err(named)?,
        face: FaceId::styled(
            r.flag("bold").map_err(named)?,
            r.flag("italic").map_err(named)?,
        ),
        align,
        vertical_align,
        color: r.color().map_err(named)?,
        rotation: r
            .optional_number("rotation", -36_000.0, 36_000.0)
            .map_err(named)?
            .unwrap_or(0.0),
        autoresize: r.flag("autoresize").map_err(named)?,
        split_long_words: r.0.get("splitlongwords").is_none_or(|v| v != false),
        downward: r.flag("downward").map_err(named)?,
    })
}

/// Reads the properties of one area's object.
struct Reader<'a>(&'a Map<String, Value>);

impl Reader<'_> {
    /// A number, or a string of one (`^-?[0-9]+(\.[0-9]+)?$`), within bounds.
    fn optional_number(&self, key: &str, min: f64, max: f64) -> Result<Option<f32>, String> {
        let value = match self.0.get(key) {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::Number(n)) => n.as_f64(),
            Some(Value::String(s)) if is_decimal(s) => s.parse::<f64>().ok(),
            Some(_) => None,
        };
        match value {
            Some(v) if v.is_finite() && (min..=max).contains(&v) => Ok(Some(v as f32)),
            Some(_) => Err(format!("\"{key}\" must be from {min} to {max}.")),
            None => Err(format!("\"{key}\" must be a number.")),
        }
    }

    fn number(&self, key: &str, min: f64, max: f64) -> Result<f32, String> {
        self.optional_number(key, min, max)?
            .ok_or_else(|| format!("\"{key}\" must be a number."))
    }

    fn flag(&self, key: &str) -> Result<bool, String> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(format!("\"{key}\" must be true or false.")),
        }
    }

    fn text(&self, key: &str) -> Result<String, String> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(s)) if s.chars().count() <= MAX_TEXT => Ok(s.clone()),
            Some(Value::String(_)) => {
                Err(format!("\"{key}\" is longer than {MAX_TEXT} characters."))
            }
            Some(_) => Err(format!("\"{key}\" must be a string.")),
        }
    }

    fn color(&self) -> Result<[u8; 3], String> {
        let refused = || "\"color\" must be a list of 3 or 4 numbers from 0 to 255.".to_owned();
        match self.0.get("color") {
            None | Some(Value::Null) => Ok([0, 0, 0]),
            Some(Value::Array(parts)) if (3..=4).contains(&parts.len()) => {
                let mut rgb = [0u8; 3];
                for (i, part) in parts.iter().enumerate() {
                    let v = part.as_f64().filter(|v| (0.0..=255.0).contains(v));
                    let v = v.ok_or_else(refused)?;
                    if i < 3 {
                        rgb[i] = v.round() as u8;
                    }
                }
                Ok(rgb)
            }
            Some(_) => Err(refused()),
        }
    }

    fn source(&self) -> Result<Source, String> {
        let text_i18n = match self.0.get("text_i18n") {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(Value::Object(map)) if map.len() <= 50 => map
                .iter()
                .map(|(lang, v)| match v.as_str() {
                    Some(s)
                        if s.chars().count() <= MAX_TEXT
                            && !lang.is_empty()
                            && lang.len() <= 35
                            && lang.chars().all(|c| c.is_ascii_alphabetic() || c == '-') =>
                    {
                        Ok((lang.clone(), s.to_owned()))
                    }
                    _ => Err(format!(
                        "\"text_i18n\" maps language codes to texts of at most {MAX_TEXT} characters."
                    )),
                })
                .collect::<Result<_, _>>()?,
            Some(_) => {
                return Err(
                    "\"text_i18n\" must be an object of at most 50 languages.".to_owned()
                );
            }
        };
        let locale = self.text("locale")?;
        if locale.len() > 35 || !locale.chars().all(|c| c.is_ascii_alphabetic() || c == '-') {
            return Err("\"locale\" must be a language code.".into());
        }
        Ok(Source {
            content: self.text("content")?,
            text: self.text("text")?,
            text_i18n,
            locale: Some(locale).filter(|l| !l.is_empty()),
        })
    }
}

/// Whether a string is a decimal number as pretix's schema allows in place of one.
fn is_decimal(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, "1"));
    !whole.is_empty()
        && !fraction.is_empty()
        && whole.bytes().all(|b| b.is_ascii_digit())
        && fraction.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn numbers_may_be_strings_of_decimals_as_pretix_writes_them() {
        assert!(is_decimal("12") && is_decimal("-1.50") && is_decimal("0.0"));
        assert!(!is_decimal("1.") && !is_decimal(".5") && !is_decimal("1e3") && !is_decimal(""));
        let layout = Layout::parse(&json!([
            {"type": "barcodearea", "left": "130.40", "bottom": 204.5, "size": "64.00"}
        ]))
        .expect("valid");
        assert_eq!(layout.areas[0].left, 130.4);
        assert_eq!(layout.areas[0].page, 1);
    }

    #[test]
    fn a_bad_area_is_named_by_its_number_and_type() {
        let bad = |v: Value| Layout::parse(&v).expect_err("refused").0;
        assert_eq!(
            bad(
                json!([{"type": "poweredby", "left": 1, "bottom": 1, "size": 5, "content": "dark"},
                       {"type": "textcontainer", "left": 1, "bottom": 1}])
            ),
            "Area 2: (textcontainer) \"content\" is required."
        );
        assert!(
            bad(json!([{"type": "barcodearea", "left": 1, "bottom": 1, "size": 5, "x": 1}]))
                .contains("\"x\" is not a property")
        );
        assert!(bad(json!([{"type": "circle"}])).contains("no type of area"));
        assert!(
            bad(json!([{"type": "barcodearea", "left": "1,5", "bottom": 1, "size": 5}]))
                .contains("\"left\" must be a number")
        );
        assert!(bad(json!([{"type": "barcodearea", "left": 1, "bottom": 1, "size": 5, "color": [0, 0, 300]}])).contains("color"));
        assert!(
            bad(json!([{"type": "barcodearea", "left": 1, "bottom": 1, "size": 5, "page": 0}]))
                .contains("page")
        );
        assert!(bad(json!({"type": "barcodearea"})).contains("list"));
    }
}
