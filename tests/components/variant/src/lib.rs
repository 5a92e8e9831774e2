//! A component that answers every request with 200, a `Variant` header and a body naming
//! itself, the tenant and the path: installed for one tenant in place of `listing` by the
//! per-tenant component tests, so that a response shows which component served it.

use rental_guest::{Error, Handler, Request, Response, context, json};

struct Variant;

impl Handler for Variant {
    fn handle(request: Request) -> Result<Response, Error> {
        Ok(json(
            200,
            &serde_json::json!({
                "Variant": "listing-variant",
                "Tenant": context::tenant(),
                "Path": request.path,
            }),
        )
        .with_header("x-component-variant", "listing-variant"))
    }
}

rental_guest::export_handler!(Variant);
