//! A small streaming walk over an XML document for the XML loaders (UN, OFAC `sdn.xml`).
//!
//! It reports each element's opening (with its path of local names, namespace prefixes dropped)
//! and its closing (with the element's own text, entity references resolved and surrounding
//! whitespace trimmed). A document that ends before its root element closes, or inside a tag, is
//! [`LoadError::Truncated`]; any other well-formedness error is [`LoadError::Xml`] with its byte
//! offset.

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use super::LoadError;

/// One step of the walk. `path` holds the local names from the root down to this element.
pub(super) enum Step<'w, 'x> {
    Open {
        path: &'w [String],
        start: &'w BytesStart<'x>,
    },
    Close {
        path: &'w [String],
        text: &'w str,
    },
}

/// Walks `doc`, calling `on_step` for every element opening and closing; `on_step` receives the
/// current byte offset for its own error messages.
pub(super) fn walk<'x>(
    doc: &'x str,
    mut on_step: impl FnMut(Step<'_, 'x>, u64) -> Result<(), LoadError>,
) -> Result<(), LoadError> {
    let mut reader = Reader::from_str(doc);
    let config = reader.config_mut();
    config.expand_empty_elements = true;
    config.check_end_names = true;
    config.trim_text(false);

    // Reused name buffers: `names[..depth]` is the current path.
    let mut names: Vec<String> = Vec::new();
    let mut depth = 0usize;
    let mut text = String::new();
    loop {
        let event = match reader.read_event() {
            Ok(event) => event,
            Err(e) => return Err(xml_error(&reader, e)),
        };
        match event {
            Event::Start(start) => {
                let local = start.local_name();
                let name = std::str::from_utf8(local.as_ref()).map_err(|_| LoadError::Utf8)?;
                if names.len() == depth {
                    names.push(String::new());
                }
                names[depth].clear();
                names[depth].push_str(name);
                depth += 1;
                text.clear();
                on_step(
                    Step::Open {
                        path: &names[..depth],
                        start: &start,
                    },
                    reader.buffer_position(),
                )?;
            }
            Event::End(_) => {
                // check_end_names guarantees the end matches the open element.
                let trimmed = text.trim();
                on_step(
                    Step::Close {
                        path: &names[..depth],
                        text: trimmed,
                    },
                    reader.buffer_position(),
                )?;
                text.clear();
                depth = depth.saturating_sub(1);
            }
            Event::Text(t) => {
                if depth > 0 {
                    let content = t.xml_content().map_err(|e| LoadError::Xml {
                        position: reader.buffer_position(),
                        message: e.to_string(),
                    })?;
                    text.push_str(&content);
                }
            }
            Event::CData(c) => {
                if depth > 0 {
                    let content = c.xml_content().map_err(|e| LoadError::Xml {
                        position: reader.buffer_position(),
                        message: e.to_string(),
                    })?;
                    text.push_str(&content);
                }
            }
            Event::GeneralRef(r) => {
                let position = reader.buffer_position();
                if r.is_char_ref() {
                    match r.resolve_char_ref() {
                        Ok(Some(c)) => text.push(c),
                        Ok(None) | Err(_) => {
                            return Err(LoadError::Xml {
                                position,
                                message: "invalid character reference".into(),
                            })
                        }
                    }
                } else {
                    let name = r.decode().map_err(|e| LoadError::Xml {
                        position,
                        message: e.to_string(),
                    })?;
                    match quick_xml::escape::resolve_predefined_entity(&name) {
                        Some(value) => text.push_str(value),
                        None => {
                            return Err(LoadError::Xml {
                                position,
                                message: format!("unknown entity `&{name};`"),
                            })
                        }
                    }
                }
            }
            Event::Eof => {
                if depth > 0 {
                    return Err(LoadError::Truncated(format!(
                        "the document ends inside <{}>",
                        names[..depth].join("/")
                    )));
                }
                return Ok(());
            }
            Event::Empty(_)
            | Event::Comment(_)
            | Event::Decl(_)
            | Event::PI(_)
            | Event::DocType(_) => {}
        }
    }
}

fn xml_error(reader: &Reader<&[u8]>, error: quick_xml::Error) -> LoadError {
    use quick_xml::errors::SyntaxError;
    let position = reader.error_position();
    match &error {
        quick_xml::Error::Syntax(
            SyntaxError::UnclosedTag
            | SyntaxError::UnclosedComment
            | SyntaxError::UnclosedCData
            | SyntaxError::UnclosedPIOrXmlDecl
            | SyntaxError::UnclosedDoctype,
        ) => LoadError::Truncated(format!("{error} (byte {position})")),
        _ => LoadError::Xml {
            position,
            message: error.to_string(),
        },
    }
}

/// The value of attribute `name` (local name) on `start`, unescaped.
pub(super) fn attribute(
    start: &BytesStart<'_>,
    name: &str,
    position: u64,
) -> Result<Option<String>, LoadError> {
    for attr in start.attributes() {
        let attr = attr.map_err(|e| LoadError::Xml {
            position,
            message: e.to_string(),
        })?;
        if attr.key.local_name().as_ref() == name.as_bytes() {
            let value = attr.unescape_value().map_err(|e| LoadError::Xml {
                position,
                message: e.to_string(),
            })?;
            return Ok(Some(value.into_owned()));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn closes(doc: &str) -> Result<Vec<(String, String)>, LoadError> {
        let mut out = Vec::new();
        walk(doc, |step, _| {
            if let Step::Close { path, text } = step {
                out.push((path.join("/"), text.to_owned()));
            }
            Ok(())
        })?;
        Ok(out)
    }

    #[test]
    fn text_with_references_paths_and_namespaces() {
        let doc = "<?xml version=\"1.0\"?><a:root xmlns:a=\"urn:x\"><a:b>X &amp; Y&#33;</a:b><c/><d><![CDATA[<z>]]></d></a:root>";
        let got = closes(doc).expect("parses");
        assert_eq!(
            got,
            [
                ("root/b".to_owned(), "X & Y!".to_owned()),
                ("root/c".to_owned(), String::new()),
                ("root/d".to_owned(), "<z>".to_owned()),
                ("root".to_owned(), String::new()),
            ]
        );
    }

    #[test]
    fn unclosed_documents_are_truncated_and_mismatches_are_errors() {
        assert!(matches!(
            closes("<root><b>x</b>"),
            Err(LoadError::Truncated(_))
        ));
        assert!(matches!(
            closes("<root><b>x</b><c"),
            Err(LoadError::Truncated(_))
        ));
        assert!(matches!(
            closes("<root><b>x</c></root>"),
            Err(LoadError::Xml { .. })
        ));
        assert!(matches!(
            closes("<root>&bogus;</root>"),
            Err(LoadError::Xml { .. })
        ));
    }
}
