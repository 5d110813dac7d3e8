"""How one- and two-line notes in legacy encodings decode (``openbook.ingest._common.decode_text``).

Each note is written in its encoding to a temporary file and decoded; a row is *wrong* when the text differs,
*silent* when it is wrong with no warning, *warned* when the decoding added a warning. Prints the wrong rows and
one summary line.

    PYTHONPATH=src python benchmarks/short_encodings.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from openbook.ingest._common import decode_text

NOTES = {
    "ru": ["Привет, мир.", "Библиотека открыта в субботу.", "Отчёт за март готов.\nПроверьте цифры.",
           "Собрание в среду в 10:00.", "Ключ от склада у Ивана.", "Пароль сменили вчера.",
           "Встреча перенесена на пятницу.\nЗал 3.", "Счёт оплачен."],
    "ja": ["図書館は土曜日に開館します。", "会議は水曜日です。", "こんにちは", "東京駅で待ち合わせ。"],
    "ko": ["도서관은 토요일에 문을 엽니다.", "회의는 수요일입니다.", "안녕하세요"],
    "zh": ["图书馆星期六开放。", "会议在星期三。", "你好，世界", "请在周五前提交报告。"],
    "west": ["Café crème.", "Über die Brücke.", "naïve façade", "Ça va très bien, merci.", "Straße",
             "El niño está aquí.", "Smörgåsbord på fredag.", "“Quoted” – dash", "Total: 30 €",
             "Price list: 5 € per item, 10 € for two.", "© 2019 Müller GmbH. Alle Rechte vorbehalten.",
             "Temperature: 21 °C, humidity 40 %.", "ID;Name;City\n1;Müller;München\n2;Søren;Århus"],
    "mixed": ["Order #1234 shipped to 東京 on Monday."],
}
ENCODINGS = {"ru": ["koi8-r", "cp1251", "cp866", "iso8859-5", "utf-16-le", "utf-16-be"],
             "ja": ["shift_jis", "euc_jp", "utf-16"], "ko": ["euc_kr"], "zh": ["gb18030", "gbk", "big5"],
             "west": ["cp1252"], "mixed": ["shift_jis"]}
OTHERS = [("cp1253", "Καλημέρα κόσμε."), ("cp1253", "Η συνάντηση είναι την Τετάρτη."), ("cp1255", "שלום עולם"),
          ("cp1256", "مرحبا بالعالم"), ("cp874", "สวัสดีครับ"), ("cp1250", "Spotkanie w środę o 10:00."),
          ("cp1254", "Günaydın, İstanbul."), ("koi8-u", "Привіт, світ.")]


def main() -> None:
    rows = [(enc, text) for lang, texts in NOTES.items() for enc in ENCODINGS[lang] for text in texts] + OTHERS
    total = wrong = silent = warned = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "note.txt"
        for encoding, text in rows:
            try:
                path.write_bytes(text.encode(encoding))
            except UnicodeEncodeError:
                continue  # a simplified character Big5 lacks
            decoded = decode_text(path)
            total += 1
            warned += bool(decoded.warnings)
            if decoded.text != text:
                wrong += 1
                silent += not decoded.warnings
                print(f"{encoding:10} {text[:30]!r} -> {decoded.text[:30]!r} {'warned' if decoded.warnings else 'SILENT'}")
    print(f"{total} notes: {wrong} wrong ({silent} silently), {warned} with a warning")


if __name__ == "__main__":
    main()
