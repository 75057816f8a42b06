"""GET /.well-known/http-message-signatures-directory: the key directory a site reads to
verify sift's signed requests (Web Bot Auth, `fetch/identity.py`). Public (no token): sites
fetch it; it holds the public key only. With `[identity]` off there is none: a 404."""

from __future__ import annotations

from sift.core.errors import NotFound
from sift.fetch.identity import DIRECTORY_TYPE
from sift.web.base import BaseHandler

DIRECTORY_MAX_AGE = 3600  # seconds a site may keep the directory


class DirectoryHandler(BaseHandler):
    route = "/.well-known/http-message-signatures-directory"
    public = True

    def get(self) -> None:
        signer = self.svc.signer
        if signer is None:
            raise NotFound("no key directory: [identity] is off")
        self.set_header("Content-Type", DIRECTORY_TYPE)
        self.set_header("Cache-Control", f"max-age={DIRECTORY_MAX_AGE}")
        data = signer.directory()
        self.bytes_out = len(data)
        self.finish(data)
