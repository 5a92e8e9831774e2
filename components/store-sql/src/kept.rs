//! The bodies a request's store keeps for its answer (WIT `scan-kept`): numbered in the order
//! kept, read back by number, bounded in bytes. `rentald`, the Spin adapter and the test host
//! each keep one [`KeptBodies`] per request.

use crate::{Document, StoreError};

/// How many bytes of bodies one request may keep.
pub const MAX_KEPT_BYTES: usize = 16 << 20;

/// A request's kept bodies.
#[derive(Debug, Default)]
pub struct KeptBodies {
    bodies: Vec<String>,
    bytes: usize,
}

/// A document whose body is kept: its id, its revision and the body's number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptDocument {
    pub id: String,
    pub revision: u64,
    pub body: u32,
}

impl KeptBodies {
    /// Keeps the documents' bodies, in order. Past [`MAX_KEPT_BYTES`] a fault: the caller
    /// traps, as it does for a guest past its memory limit.
    pub fn keep(&mut self, documents: Vec<Document>) -> Result<Vec<KeptDocument>, StoreError> {
        let adding: usize = documents.iter().map(|d| d.body.len()).sum();
        if self.bytes + adding > MAX_KEPT_BYTES {
            return Err(StoreError::Fault(format!(
                "the request keeps more than {} MiB of bodies (scan-kept)",
                MAX_KEPT_BYTES >> 20
            )));
        }
        self.bytes += adding;
        // One allocation for the call's bodies rather than a doubling per power of two.
        self.bodies.reserve(documents.len());
        Ok(documents
            .into_iter()
            .map(|document| {
                let body = u32::try_from(self.bodies.len()).unwrap_or(u32::MAX);
                self.bodies.push(document.body);
                KeptDocument {
                    id: document.id,
                    revision: document.revision,
                    body,
                }
            })
            .collect())
    }

    /// The body numbered `body`; `None` for a number not handed out.
    pub fn get(&self, body: u32) -> Option<&str> {
        self.bodies
            .get(usize::try_from(body).ok()?)
            .map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(id: &str, body: String) -> Document {
        Document {
            id: id.to_owned(),
            revision: 1,
            body,
        }
    }

    #[test]
    fn bodies_are_numbered_in_order_and_read_back() {
        let mut kept = KeptBodies::default();
        let first = kept
            .keep(vec![
                document("a", "{1}".into()),
                document("b", "{2}".into()),
            ])
            .unwrap();
        let second = kept.keep(vec![document("c", "{3}".into())]).unwrap();
        assert_eq!(
            [&first[..], &second[..]]
                .concat()
                .iter()
                .map(|d| (d.id.as_str(), d.body))
                .collect::<Vec<_>>(),
            [("a", 0), ("b", 1), ("c", 2)]
        );
        assert_eq!(kept.get(1), Some("{2}"));
        assert_eq!(kept.get(3), None);
    }

    #[test]
    fn keeping_past_the_limit_is_a_fault() {
        let mut kept = KeptBodies::default();
        kept.keep(vec![document("a", "x".repeat(MAX_KEPT_BYTES - 1))])
            .unwrap();
        assert!(matches!(
            kept.keep(vec![document("b", "xx".into())]),
            Err(StoreError::Fault(_))
        ));
        kept.keep(vec![document("c", "x".into())]).unwrap();
        assert_eq!(kept.get(1), Some("x"), "a refused call keeps nothing");
    }
}
