"""Schemathesis hooks of scripts/api-fuzz: the bearer token of the fuzzed tenant's API user.

Every `/api/...` operation except the two bank webhooks (which take no token) is sent
`Authorization: Bearer <token>`. The token starts as the one scripts/api-fuzz requested
(RENTALD_FUZZ_TOKEN) and is requested again from `POST /auth/token` (client credentials,
RENTALD_FUZZ_CLIENT_ID / RENTALD_FUZZ_CLIENT_SECRET) when less than ten minutes of its life
are left: tokens live 86399 seconds (docs/contract.md), and a long run may outlive one.
"""

import base64
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
