//! Logs: `tracing` to standard error, as text or JSON, filtered by `RUST_LOG` (default info);
//! and how errors are written into logs and into the records operators read.

use std::io::IsTerminal as _;

use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    // Colours for a person at a terminal only: a log written to a file or read by a collector
    // stays plain text.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr);
    // A second initialisation (never in the binary) is harmless, hence the ignored result.
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}

/// An error with its causes, which say why a connection failed (rustls and reqwest never
/// print key material).
pub fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// `text` cut to at most `max` bytes, on a character.
pub fn truncate(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_texts_are_cut_on_a_character() {
        let cut = super::truncate("é".repeat(1_000), 999);
        assert_eq!(cut, "é".repeat(499));
        assert_eq!(super::truncate("short".to_owned(), 999), "short");
    }
}
