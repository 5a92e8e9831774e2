"""Schemathesis hooks of scripts/api-fuzz: the credentials of the fuzzed tenant.

Every `/api/...` operation except the two bank webhooks (which take no token) is sent
`Authorization: Bearer <token>`. The token starts as the one scripts/api-fuzz requested
(RENTALD_FUZZ_TOKEN) and is requested again from `POST /auth/token` (client credentials,
RENTALD_FUZZ_CLIENT_ID / RENTALD_FUZZ_CLIENT_SECRET) when less than ten minutes of its life
are left: tokens live 86399 seconds (docs/contract.md), and a long run may outlive one.

Bank one's webhook is signed with the tenant's secret (RENTALD_FUZZ_BANKONE_SECRET) most of
the time, so that its bodies reach the component rather than stopping at the signature; an
unsigned or wrongly signed event must still be 401. Bank two's is left to its 401s: with the
right secret it asks a bank that does not exist here.
"""

import base64
import hashlib
import hmac
import json
import os
import threading
import time

import requests
import schemathesis

BASE_URL = os.environ["RENTALD_FUZZ_URL"]
HOST = os.environ["RENTALD_FUZZ_HOST"]
CLIENT_ID = os.environ["RENTALD_FUZZ_CLIENT_ID"]
CLIENT_SECRET = os.environ["RENTALD_FUZZ_CLIENT_SECRET"]
MARGIN_SECONDS = 600
BANKONE_SECRET = os.environ.get("RENTALD_FUZZ_BANKONE_SECRET", "").encode()
BANKONE_PATH = "/api/bankone/webhooks"


def expiry(token):
    """The token's `exp` claim (unix seconds); 0 when it cannot be read."""
    try:
        payload = token.split(".")[1]
        payload += "=" * (-len(payload) % 4)
        return int(json.loads(base64.urlsafe_b64decode(payload))["exp"])
    except (IndexError, KeyError, TypeError, ValueError):
        return 0


def request_token():
    response = requests.post(
        f"{BASE_URL}/auth/token",
        headers={"Host": HOST},
        data={
            "grant_type": "client_credentials",
            "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET,
        },
        timeout=30,
    )
    if response.status_code != 200:
        raise RuntimeError(
            f"token request answered {response.status_code}: {response.text[:200]}"
        )
    return response.json()["access_token"]


# Caching is done here, by the token's own expiry, not by schemathesis (refresh_interval=None),
# and a 401 does not fetch a new token (retry_on=[]): the fuzzer sends broken credentials on
# purpose, and their 401 must reach the checks.
@schemathesis.auth(refresh_interval=None, retry_on=[]).apply_to(
    path_regex=r"^/api/"
).skip_for(path=["/api/bankone/webhooks", "/api/v1/banktwo/webhooks"])
class BearerToken:
    lock = threading.Lock()
    token = os.environ["RENTALD_FUZZ_TOKEN"]

    def get(self, case, context):
        with BearerToken.lock:
            if expiry(BearerToken.token) - time.time() < MARGIN_SECONDS:
                BearerToken.token = request_token()
            return BearerToken.token

    def set(self, case, data, context):
        case.headers = case.headers or {}
        case.headers["Authorization"] = f"Bearer {data}"


@schemathesis.hook
def before_call(context, case, kwargs):
    key_per_request(case)
    sign_bankone_event(case)


def key_per_request(case):
    """Makes a write's generated `Idempotency-Key` the request's own: schemathesis draws few
    distinct keys ("0", "A", ...), and one sent again with another request is refused (422)
    before the write is tried, which would leave the writes' rules untested. The same
    request with the same drawn key keeps one key, so a repeated case is answered again."""
    headers = case.headers or {}
    name = next((n for n in headers if n.lower() == "idempotency-key"), None)
    if name is None or negative_header(case):
        return
    raw = request_body(case.body) or b""
    target = f"{case.method} {case.formatted_path} {sorted((case.query or {}).items())}"
    digest = hashlib.sha256(target.encode() + b"\n" + raw).hexdigest()[:16]
    headers[name] = f"{str(headers[name])[:200]}-{digest}"


def sign_bankone_event(case):
    """Signs most bank one events as the bank does: HMAC-SHA256 over `<t>.<raw body>`."""
    if case.operation.path != BANKONE_PATH or not BANKONE_SECRET:
        return
    if negative_header(case):
        # The case is about an invalid signature header: it goes as generated (401).
        return
    raw = request_body(case.body)
    # About one event in five stays unsigned (chosen by its body, so a seed replays it).
    if raw is None or hashlib.sha256(raw).digest()[0] < 51:
        return
    timestamp = str(int(time.time()))
    mac = hmac.new(BANKONE_SECRET, timestamp.encode() + b"." + raw, hashlib.sha256)
    case.headers = case.headers or {}
    case.headers["BankOne-Signature"] = f"t={timestamp},v1={mac.hexdigest()}"


def negative_header(case):
    """Whether the case is a negative one whose invalid part is a header."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_negative:
        return False
    data = meta.phase.data
    locations = [getattr(data, "parameter_location", None)]
    locations += [m.parameter_location for m in getattr(data, "mutations", ())]
    return any(loc is not None and loc.value == "header" for loc in locations)


def request_body(body):
    """The bytes requests sends for a JSON body (schemathesis hands it the value as `json`),
    so that the signature covers what the server reads; `None` when there is none."""
    if isinstance(body, bytes):
        return body
    if body is None:
        return b"null"
    try:
        raw = requests.models.complexjson.dumps(body, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return raw if isinstance(raw, bytes) else raw.encode("utf-8")
