//! YAML frontmatter of markdown agent files (being written).
use super::value::Node;
use crate::source::{Loc, SourceId};

/// Why frontmatter could not be read.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontmatterError {
    pub loc: Loc,
    pub message: String,
}

pub enum Frontmatter {
    Absent,
    Data(Node),
    BrokenKept(FrontmatterError),
    BrokenDropped(FrontmatterError),
    Executable(FrontmatterError),
}

pub fn parse(_text: &str, _source: SourceId) -> Frontmatter {
    Frontmatter::Absent
}
