"""A server that starts on a store whose last server was killed mid-upload removes the uploaded originals no
document holds (and the staged files), and keeps every original a stored document came from."""

from __future__ import annotations

from openbook.api import Engine
from openbook.config import Config
from openbook.server.service import UPLOADS, Service


def test_a_restarted_server_sweeps_the_originals_of_an_upload_that_never_committed(tmp_path):
    store = tmp_path / "store"
    uploads = store / UPLOADS
    (uploads / ".incoming").mkdir(parents=True)
    kept = uploads / "kept.md"
    kept.write_text("# Kept\n\nThe kept note says the boiler is serviced every March.\n", encoding="utf-8")
    config = Config().with_overrides({"store": str(store), "embedding.enabled": False})
    with Engine.open(store, config, create=True) as engine:
        assert engine.ingest([kept]).added
    orphan = uploads / "orphan.md"  # moved in by an upload whose ingest was killed before it committed
    orphan.write_text("# Orphan\n\nNever stored.\n", encoding="utf-8")
    staged = uploads / ".incoming" / "0123abcd-part.md"
    staged.write_text("half an upload", encoding="utf-8")

    service = Service(store, config, readers=1)
    try:
        assert kept.exists() and not orphan.exists() and not staged.exists()
        with Engine.open(store, config) as engine:
            assert engine.search("boiler serviced March", 3)
    finally:
        service.close()
