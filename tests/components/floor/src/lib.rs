//! The sandbox's floor: a component that answers every request with 200 and about 5 KB of
//! JSON (the size of a one-booking page) without a store call. `scripts/bench` installs it as
//! a tenant's own `listing`, so its row costs the whole front door (tenant, token, a fresh
//! instance, the body through the component's boundary) and nothing else.
//!
//! The body is put together as the listing puts a page together from rendered items: copied,
//! not serialised. Serialising a 5,000-character string escapes it a byte at a time, which
//! was an eighth of the row's time, the component's own work rather than the platform's.

use rental_guest::{Error, Handler, Request, Response, json_text};

/// The body's one text field, sized so that the answer is about 5 KB.
const FILLER: &str = {
    const BYTES: [u8; 5_000] = [b'x'; 5_000];
    match std::str::from_utf8(&BYTES) {
        Ok(filler) => filler,
        Err(_) => panic!("ASCII is UTF-8"),
    }
};

struct Floor;

impl Handler for Floor {
    fn handle(request: Request) -> Result<Response, Error> {
        let path = serde_json::to_string(&request.path)
            .map_err(|error| Error::internal(format!("serialising the path: {error}")))?;
        let mut body = String::with_capacity(FILLER.len() + path.len() + 24);
        body.push_str("{\"Path\":");
        body.push_str(&path);
        body.push_str(",\"Filler\":\"");
        body.push_str(FILLER);
        body.push_str("\"}");
        Ok(json_text(200, body))
    }
}

rental_guest::export_handler!(Floor);
