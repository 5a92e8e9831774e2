//! The sandbox's floor: a component that answers every request with 200 and about 5 KB of
//! JSON (the size of a one-booking page) without a store call. `scripts/bench` installs it as
//! a tenant's own `listing`, so its row costs the whole front door (tenant, token, a fresh
//! instance, the body through wasi:http) and nothing else.

use rental_guest::{Error, Handler, Request, Response, json};

/// The body's one text field, sized so that the answer is about 5 KB.
const FILLER_BYTES: usize = 5_000;

struct Floor;

impl Handler for Floor {
    fn handle(request: Request) -> Result<Response, Error> {
        Ok(json(
            200,
            &serde_json::json!({
                "Path": request.path,
                "Filler": "x".repeat(FILLER_BYTES),
            }),
        ))
    }
}

rental_guest::export_handler!(Floor);
