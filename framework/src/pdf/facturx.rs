//! Hybrid invoices: a PDF/A-3B file that carries the invoice's EN 16931 XML as
//! `factur-x.xml`, as Factur-X 1.0 and ZUGFeRD 2 ask, so that one file is both the invoice
//! people read and the one software books. PDF/A-3 is what allows a file inside an archival
//! PDF; it asks in turn for XMP metadata that names the PDF/A part and describes every
//! property it uses (hence the extension schema of the `fx` properties), an output intent
//! that gives the device colours a meaning (the sRGB profile of `framework/icc/`), a file
//! identifier, and fonts all embedded (the writer's always are).

use std::fmt::Write as _;
use std::sync::LazyLock;

use chrono::{DateTime, Datelike, Timelike, Utc};
use pdf_writer::types::AssociationKind;
use pdf_writer::{Chunk, Date};

use super::writer::{Attachment, Extras, OutputProfile, PRODUCER, Writer, deflate};

/// The name Factur-X and ZUGFeRD 2 give the embedded XML.
pub const FILE_NAME: &str = "factur-x.xml";

/// The Factur-X profile the embedded documents follow, as the XMP names it.
pub const CONFORMANCE_LEVEL: &str = "EN 16931";

/// The namespace of the Factur-X XMP properties.
const FX_NAMESPACE: &str = "urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#";

/// The output condition the sRGB profile stands for.
const SRGB_CONDITION: &str = "sRGB IEC61966-2.1";

/// The sRGB ICC profile (see `framework/icc/README.md`).
const SRGB_ICC: &[u8] = include_bytes!("../../icc/sRGB.icc");

/// The sRGB output intent, its profile deflated once.
pub fn srgb_output_intent() -> OutputProfile<'static> {
    static DEFLATED: LazyLock<Vec<u8>> = LazyLock::new(|| deflate(SRGB_ICC));
    OutputProfile {
        deflated: &DEFLATED,
        components: 3,
        condition: SRGB_CONDITION,
    }
}

/// A moment as a PDF date, in UTC.
pub fn pdf_date(at: DateTime<Utc>) -> Date {
    // Each field is within its range (a month is 1 to 12, ...); the casts cannot cut.
    Date::new(u16::try_from(at.year()).unwrap_or(0))
        .month(at.month() as u8)
        .day(at.day() as u8)
        .hour(at.hour() as u8)
        .minute(at.minute() as u8)
        .second(at.second().min(59) as u8)
        .utc_offset_hour(0)
        .utc_offset_minute(0)
}

/// A moment as an XMP date, in UTC, to the second (as the PDF date of the same moment).
fn xmp_date(at: DateTime<Utc>) -> String {
    at.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Text escaped for XML content.
fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            // Characters XML 1.0 does not allow are left out.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => {}
            c => out.push(c),
        }
    }
}

/// The extension schema description of the Factur-X properties, which PDF/A asks for any
/// property outside the schemas it predefines.
const FX_EXTENSION_SCHEMA: &str = r#"  <rdf:Description rdf:about=""
    xmlns:pdfaExtension="http://www.aiim.org/pdfa/ns/extension/"
    xmlns:pdfaSchema="http://www.aiim.org/pdfa/ns/schema#"
    xmlns:pdfaProperty="http://www.aiim.org/pdfa/ns/property#">
   <pdfaExtension:schemas>
    <rdf:Bag>
     <rdf:li rdf:parseType="Resource">
      <pdfaSchema:schema>Factur-X PDFA Extension Schema</pdfaSchema:schema>
      <pdfaSchema:namespaceURI>urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#</pdfaSchema:namespaceURI>
      <pdfaSchema:prefix>fx</pdfaSchema:prefix>
      <pdfaSchema:property>
       <rdf:Seq>
        <rdf:li rdf:parseType="Resource">
         <pdfaProperty:name>DocumentFileName</pdfaProperty:name>
         <pdfaProperty:valueType>Text</pdfaProperty:valueType>
         <pdfaProperty:category>external</pdfaProperty:category>
         <pdfaProperty:description>The name of the embedded XML document</pdfaProperty:description>
        </rdf:li>
        <rdf:li rdf:parseType="Resource">
         <pdfaProperty:name>DocumentType</pdfaProperty:name>
         <pdfaProperty:valueType>Text</pdfaProperty:valueType>
         <pdfaProperty:category>external</pdfaProperty:category>
         <pdfaProperty:description>The type of the hybrid document: INVOICE</pdfaProperty:description>
        </rdf:li>
        <rdf:li rdf:parseType="Resource">
         <pdfaProperty:name>Version</pdfaProperty:name>
         <pdfaProperty:valueType>Text</pdfaProperty:valueType>
         <pdfaProperty:category>external</pdfaProperty:category>
         <pdfaProperty:description>The version of the Factur-X XML schema</pdfaProperty:description>
        </rdf:li>
        <rdf:li rdf:parseType="Resource">
         <pdfaProperty:name>ConformanceLevel</pdfaProperty:name>
         <pdfaProperty:valueType>Text</pdfaProperty:valueType>
         <pdfaProperty:category>external</pdfaProperty:category>
         <pdfaProperty:description>The Factur-X profile of the embedded XML document</pdfaProperty:description>
        </rdf:li>
       </rdf:Seq>
      </pdfaSchema:property>
     </rdf:li>
    </rdf:Bag>
   </pdfaExtension:schemas>
  </rdf:Description>
"#;

/// The XMP metadata of a PDF/A-3B file titled `title`, made at `made`: the PDF/A
/// identification, the title, producer and dates the document information repeats, and
/// the Factur-X properties with their schema description.
pub fn metadata(title: &str, lang: &str, made: DateTime<Utc>) -> String {
    let mut out = String::with_capacity(4096);
    let date = xmp_date(made);
    out.push_str(
        "<?xpacket begin=\"\u{feff}\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n\
         <x:xmpmeta xmlns:x=\"adobe:ns:meta/\">\n\
         <rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">\n\
         \x20 <rdf:Description rdf:about=\"\" xmlns:pdfaid=\"http://www.aiim.org/pdfa/ns/id/\">\n\
         \x20  <pdfaid:part>3</pdfaid:part>\n\
         \x20  <pdfaid:conformance>B</pdfaid:conformance>\n\
         \x20 </rdf:Description>\n\
         \x20 <rdf:Description rdf:about=\"\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\">\n\
         \x20  <dc:format>application/pdf</dc:format>\n\
         \x20  <dc:title><rdf:Alt><rdf:li xml:lang=\"x-default\">",
    );
    escape_into(&mut out, title);
    out.push_str("</rdf:li></rdf:Alt></dc:title>\n");
    if !lang.is_empty() {
        out.push_str("   <dc:language><rdf:Bag><rdf:li>");
        escape_into(&mut out, lang);
        out.push_str("</rdf:li></rdf:Bag></dc:language>\n");
    }
    out.push_str(
        "  </rdf:Description>\n\
         \x20 <rdf:Description rdf:about=\"\" xmlns:pdf=\"http://ns.adobe.com/pdf/1.3/\">\n\
         \x20  <pdf:Producer>",
    );
    escape_into(&mut out, PRODUCER);
    let _ = write!(
        out,
        "</pdf:Producer>\n  </rdf:Description>\n  \
         <rdf:Description rdf:about=\"\" xmlns:xmp=\"http://ns.adobe.com/xap/1.0/\">\n   \
         <xmp:CreateDate>{date}</xmp:CreateDate>\n   \
         <xmp:ModifyDate>{date}</xmp:ModifyDate>\n   \
         <xmp:MetadataDate>{date}</xmp:MetadataDate>\n  \
         </rdf:Description>\n  \
         <rdf:Description rdf:about=\"\" xmlns:fx=\"{FX_NAMESPACE}\">\n   \
         <fx:DocumentType>INVOICE</fx:DocumentType>\n   \
         <fx:DocumentFileName>{FILE_NAME}</fx:DocumentFileName>\n   \
         <fx:Version>1.0</fx:Version>\n   \
         <fx:ConformanceLevel>{CONFORMANCE_LEVEL}</fx:ConformanceLevel>\n  \
         </rdf:Description>\n"
    );
    out.push_str(FX_EXTENSION_SCHEMA);
    out.push_str("</rdf:RDF>\n</x:xmpmeta>\n<?xpacket end=\"w\"?>");
    out
}

/// What makes a document a hybrid invoice.
#[derive(Debug, Clone, Copy)]
pub struct Hybrid<'a> {
    /// The document's title, as its information and metadata give it.
    pub title: &'a str,
    /// The language of its text, e.g. `de`.
    pub lang: &'a str,
    /// The EN 16931 document to carry.
    pub xml: &'a [u8],
    /// When the invoice was made: the dates of the file and of the XML in it.
    pub made: DateTime<Utc>,
    /// The file identifier: the invoice's, and this version's.
    pub id: [[u8; 16]; 2],
}

/// Finishes `doc` as a PDF/A-3B file carrying the XML as `factur-x.xml`.
pub fn finish(
    doc: Writer,
    prelude: Option<&Chunk>,
    first_free: i32,
    hybrid: &Hybrid<'_>,
) -> Vec<u8> {
    let metadata = metadata(hybrid.title, hybrid.lang, hybrid.made);
    let date = pdf_date(hybrid.made);
    let attachments = [Attachment {
        name: FILE_NAME,
        description: "Factur-X/ZUGFeRD invoice",
        media_type: "text/xml",
        relationship: AssociationKind::Alternative,
        data: hybrid.xml,
        modified: date,
    }];
    let extras = Extras {
        metadata: Some(metadata.as_bytes()),
        output_intent: Some(srgb_output_intent()),
        attachments: &attachments,
        id: Some(hybrid.id),
        date: Some(date),
        lang: (!hybrid.lang.is_empty()).then_some(hybrid.lang),
    };
    doc.finish_with(prelude, first_free, hybrid.title, &extras)
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use crate::pdf::fonts::FaceId;

    #[test]
    fn the_metadata_names_pdfa_3b_and_describes_the_factur_x_properties() {
        let made = Utc
            .with_ymd_and_hms(2026, 3, 1, 9, 30, 5)
            .single()
            .expect("a date");
        let xmp = metadata("Invoice <R&D> 7", "en", made);
        assert!(xmp.starts_with("<?xpacket begin=\"\u{feff}\""));
        assert!(xmp.ends_with("<?xpacket end=\"w\"?>"));
        for part in [
            "<pdfaid:part>3</pdfaid:part>",
            "<pdfaid:conformance>B</pdfaid:conformance>",
            "Invoice &lt;R&amp;D&gt; 7",
            "<pdf:Producer>Tessera</pdf:Producer>",
            "<xmp:CreateDate>2026-03-01T09:30:05Z</xmp:CreateDate>",
            "<fx:ConformanceLevel>EN 16931</fx:ConformanceLevel>",
            "<fx:DocumentFileName>factur-x.xml</fx:DocumentFileName>",
            "<pdfaSchema:prefix>fx</pdfaSchema:prefix>",
        ] {
            assert!(xmp.contains(part), "{part}");
        }
        assert_eq!(xmp.matches(FX_NAMESPACE).count(), 2);
    }

    #[test]
    fn a_hybrid_file_carries_the_xml_and_the_archival_parts() {
        let mut doc = Writer::new();
        doc.start_page(595.0, 842.0);
        doc.text(FaceId::Regular, 10.0, 50.0, 700.0, "Invoice 7");
        let made = Utc
            .with_ymd_and_hms(2026, 3, 1, 9, 30, 5)
            .single()
            .expect("a date");
        let pdf = finish(
            doc,
            None,
            1,
            &Hybrid {
                title: "Invoice 7",
                lang: "en",
                xml: b"<x/>",
                made,
                id: [[1; 16], [2; 16]],
            },
        );
        let text = String::from_utf8_lossy(&pdf);
        for part in [
            "/AF [",
            "/AFRelationship /Alternative",
            "/Subtype /text#2Fxml",
            "/ModDate (D:20260301093005Z)",
            "/Size 4",
            "/EmbeddedFiles",
            "(factur-x.xml)",
            "/S /GTS_PDFA1",
            "/DestOutputProfile",
            "/Type /Metadata",
            "<pdfaid:part>3</pdfaid:part>",
            "/ID [",
        ] {
            assert!(text.contains(part), "{part}");
        }
    }
}
