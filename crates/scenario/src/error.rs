use std::fmt;

/// A scenario error: which file, which field, and what is allowed.
#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    pub file: String,
    pub field: String,
    pub msg: String,
}

impl Error {
    pub fn new(field: impl Into<String>, msg: impl Into<String>) -> Self {
        Error { file: String::new(), field: field.into(), msg: msg.into() }
    }
    pub fn in_file(mut self, file: &str) -> Self {
        self.file = file.to_string();
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let file = if self.file.is_empty() { "<scenario>" } else { &self.file };
        if self.field.is_empty() {
            write!(f, "{file}: {}", self.msg)
        } else {
            write!(f, "{file}: field `{}`: {}", self.field, self.msg)
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
