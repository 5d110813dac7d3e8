from openbook.ingest import load_file


def test_every_row_kept_with_header(tmp_path):
    path = tmp_path / "plans.csv"
    path.write_text(
        'sku,plan,price\nSL-1,"Pro, annual",10.00\n\nSL-2,Team\nSL-3,Biz,17.50,extra note\nSL-4,"a|b",1\n',
        encoding="utf-8",
    )
    doc = load_file(path, "plans.csv")[0]
    lines = doc.text.split("\n")
    assert lines[0] == "| sku | plan | price |  |"
    assert lines[1] == "| --- | --- | --- | --- |"
    assert lines[2:] == [
        "| SL-1 | Pro, annual | 10.00 |  |",
        "| SL-2 | Team |  |  |",
        "| SL-3 | Biz | 17.50 | extra note |",
        "| SL-4 | a\\|b | 1 |  |",
    ]
    assert doc.format == "csv" and doc.title == "plans"
    assert doc.metadata["rows"] == 4


def test_semicolon_dialect_is_sniffed(tmp_path):
    path = tmp_path / "eu.csv"
    path.write_text("name;amount\nAna;1,50\nBo;2,75\n", encoding="utf-8")
    assert load_file(path, "eu.csv")[0].text.split("\n")[2] == "| Ana | 1,50 |"


def test_excel_delimiter_hint_names_the_delimiter_and_is_not_a_row(tmp_path):
    path = tmp_path / "export.csv"
    path.write_bytes("sep=;\r\nArtikel;Preis\r\nMütze;3,50\r\nSchal;12,00\r\n".encode("cp1252"))  # Excel, German locale
    doc = load_file(path, "export.csv")[0]
    assert doc.text.split("\n") == ["| Artikel | Preis |", "| --- | --- |", "| Mütze | 3,50 |", "| Schal | 12,00 |"]
    assert doc.metadata["columns"] == ["Artikel", "Preis"]


def test_front_matter_is_metadata_and_its_acl_restricts(tmp_path):
    # the block was read as table rows ("| acl: [hr] |") and the salary table published to everyone
    import pytest

    from openbook.errors import IngestError

    for name, head in (("pay.csv", "---\ntitle: Pay bands\nacl: [hr]\n---\n"),
                       ("pay.tsv", '+++\ntitle = "Pay bands"\nacl = ["hr"]\n+++\n')):
        path = tmp_path / name
        sep = "\t" if name.endswith(".tsv") else ","
        path.write_text(head + f"name{sep}salary\nAna{sep}91000\n", encoding="utf-8")
        doc = load_file(path, name)[0]
        assert doc.metadata["acl"] == ["hr"] and doc.title == "Pay bands"
        assert doc.text.split("\n")[0] == "| name | salary |" and "acl" not in doc.text
        assert doc.metadata["rows"] == 1
    bad = tmp_path / "bad.csv"
    bad.write_text("---\nacl: [hr\n---\nname,salary\nAna,91000\n", encoding="utf-8")
    with pytest.raises(IngestError, match="front matter"):
        load_file(bad, "bad.csv")
    empty = tmp_path / "empty.csv"
    empty.write_text("---\nacl:\n---\nname,salary\nAna,91000\n", encoding="utf-8")
    with pytest.raises(IngestError, match="malformed acl"):
        load_file(empty, "empty.csv")
