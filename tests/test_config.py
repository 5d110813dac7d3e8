import pytest

from openbook.config import Config, load_config
from openbook.errors import ConfigError


def test_precedence_flag_env_file_default(tmp_path):
    f = tmp_path / "openbook.toml"
    f.write_text('store = "from-file"\n[bm25]\nk1 = 0.9\nb = 0.5\n[retrieval]\ntop_k = 7\n')
    cfg = load_config(f, environ={"OPENBOOK_BM25_K1": "1.5", "OPENBOOK_STORE": "from-env"},
                      flags={"store": "from-flag", "retrieval.top_k": None})
    assert cfg.store == "from-flag"
    assert cfg.bm25.k1 == 1.5 and cfg.bm25.b == 0.5
    assert cfg.retrieval.top_k == 7
    assert Config().bm25.k1 == 1.2


@pytest.mark.parametrize("text", ["nope = 1\n", "[bm25]\nk3 = 1\n", "[bm25]\nk1 = 'high'\n", "[[x\n"])
def test_unknown_or_bad_keys_are_errors(tmp_path, text):
    f = tmp_path / "c.toml"
    f.write_text(text)
    with pytest.raises(ConfigError):
        load_config(f)


def test_unknown_environment_variable_is_an_error():
    with pytest.raises(ConfigError):
        load_config(None, environ={"OPENBOOK_BOGUS_THING": "1"})


def test_missing_explicit_file(tmp_path):
    with pytest.raises(ConfigError):
        load_config(tmp_path / "absent.toml")


def test_min_coverage_still_loads_but_says_it_is_not_read(tmp_path, capsys):
    cfg_file = tmp_path / "openbook.toml"
    cfg_file.write_text("[answer]\nmin_coverage = 0.6\n", encoding="utf-8")
    cfg = load_config(cfg_file)
    assert cfg.answer.min_confidence == 0.5
    assert "min_coverage is no longer read" in capsys.readouterr().err
    load_config(None, environ={})
    assert capsys.readouterr().err == ""


def test_store_url_table_equals_the_store_key(tmp_path):
    f = tmp_path / "openbook.toml"
    f.write_text('[store]\nurl = "postgresql://ana@db:5432/corpus"\n', encoding="utf-8")
    assert load_config(f).store == "postgresql://ana@db:5432/corpus"
    assert load_config(f, environ={"OPENBOOK_STORE": "/data/store"}).store == "/data/store"
    f.write_text('[store]\nuri = "x"\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"\[store\] takes one key, url"):
        load_config(f)


def test_openbook_state_dir_is_a_known_environment_variable(tmp_path):
    # read by openbook.store.local_folder, so the config must not refuse it as unknown
    assert load_config(None, environ={"OPENBOOK_STATE_DIR": str(tmp_path)}).store


def test_openbook_cache_dir_is_a_known_environment_variable(tmp_path):
    # read by openbook._cachedir.cache_folder (the WordNet index), so the config must not refuse it as unknown
    assert load_config(None, environ={"OPENBOOK_CACHE_DIR": str(tmp_path)}).store
