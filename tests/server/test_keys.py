"""API keys: hashed at rest, revocable, fail closed on a damaged file; the CLI commands."""

from __future__ import annotations

import json
import os
import stat

import pytest

from openbook.cli import main
from openbook.errors import ConfigError
from openbook.server.keys import ANONYMOUS, AuthError, KeyStore


def test_tokens_are_stored_hashed_and_resolve_to_their_roles(tmp_path):
    keys = KeyStore(tmp_path)
    assert not keys.required and keys.authenticate(None) is ANONYMOUS
    token = keys.add("alice", ["staff", "staff", "hr"])
    raw = keys.path.read_text()
    assert token not in raw and token[len("ob_"):] not in raw
    assert stat.S_IMODE(os.stat(keys.path).st_mode) == 0o600
    who = keys.authenticate(token)
    assert (who.name, who.roles, who.write) == ("alice", ("staff", "hr"), False)
    assert keys.principal_from_headers({"authorization": f"Bearer {token}"}) == who
    assert keys.principal_from_headers({"x-api-key": token}) == who
    with pytest.raises(AuthError, match="requires an API key"):
        keys.authenticate(None)
    with pytest.raises(ConfigError, match="active key named 'alice'"):
        keys.add("alice", ["finance"])


def test_revoked_keys_stay_required_and_are_refused(tmp_path):
    keys = KeyStore(tmp_path)
    token = keys.add("bob", ["finance"])
    assert keys.revoke("bob") and not keys.revoke("bob")
    with pytest.raises(AuthError, match="revoked"):
        keys.authenticate(token)
    assert keys.required  # every key revoked still means keys are required, never anonymous access


def test_a_damaged_key_file_fails_closed(tmp_path):
    keys = KeyStore(tmp_path)
    keys.add("carol", ["staff"])
    keys.path.write_text("{not json")
    with pytest.raises(ConfigError, match="keys.json: not a readable openbook key list"):
        keys.authenticate("anything")


def test_keys_cli(tmp_path, capsys):
    store = str(tmp_path / "s")
    main(["keys", "add", "dave", "--role", "staff", "--write", "--store", store])
    token = capsys.readouterr().out.strip()
    assert token.startswith("ob_")
    main(["keys", "list", "--json", "--store", store])
    listed = json.loads(capsys.readouterr().out)
    assert listed[0]["name"] == "dave" and listed[0]["roles"] == ["staff"] and "sha256" not in listed[0]
    main(["keys", "revoke", "dave", "--store", store])
    assert "revoked" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        main(["keys", "revoke", "dave", "--store", store])
    assert exc.value.code == 1 and "no active key named 'dave'" in capsys.readouterr().err


def test_keys_add_says_the_roles_it_stored(tmp_path, capsys):
    # `--role ""` printed "created with roles ['']" for a key that sees public documents only
    store = str(tmp_path / "s")
    main(["keys", "add", "erin", "--role", "", "--store", store])
    assert "created with roles (none: public documents only)" in capsys.readouterr().err
    main(["keys", "add", "fay", "--role", " hr ", "--role", "hr", "--store", store])
    assert "created with roles ['hr']" in capsys.readouterr().err


def test_a_database_store_keeps_its_keys_in_a_per_database_folder_on_this_host(tmp_path, monkeypatch):
    from openbook.store import local_folder

    monkeypatch.setenv("OPENBOOK_STATE_DIR", str(tmp_path / "state"))
    url = "postgresql://ann:secret@db.example:5432/kb"
    folder = local_folder(url)
    assert folder.parent == tmp_path / "state" / "stores" and folder.name.startswith("postgresql-")
    assert local_folder("postgresql://ann:other@db.example:5432/kb") == folder  # a new password keeps the keys
    assert local_folder("postgresql://ann@db.example:5432/other") != folder
    assert local_folder(tmp_path / "s") == tmp_path / "s"  # the embedded store's own folder

    token = KeyStore(url).add("ci", ["staff"], False)
    assert (folder / "keys.json").is_file() and not (tmp_path / "postgresql:").exists()
    assert KeyStore("postgres://ann@db.example:5432/kb").authenticate(token).roles == ("staff",)
