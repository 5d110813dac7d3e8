"""Write questions.jsonl (run once, before the first evaluation; the file's sha256 is in README.md)."""
import json

S = ["staff"]
Q = [
 # plain facts
 ("How long can an undergraduate borrow a standard printed book?", True,
  "28 days (Category A items are lent to undergraduates for 28 days).", ["28 days"], ["doc-001"], "none"),
 # tables
 ("What time does the Law Library close on Saturdays during term?", True,
  "16:00 (term Saturday hours 10:00-16:00).", ["16:00"], ["doc-002"], "table"),
 ("What is the late fee per day for a DVD?", True,
  "£0.50 per day (DVDs are Category B, 7-day loans; maximum £10.00). The docs call it an overdue charge.",
  ["0.50"], ["doc-013"], "synonym"),
 # versions / conflicts
 ("How much does it cost to print one black-and-white A4 side?", True,
  "£0.07 per side since 15 September 2025; the 2025 notice replaces the September 2023 page, which said £0.10.",
  ["0.07"], ["doc-004", "doc-003"], "conflict"),
 ("I'm printing drafts of my dissertation in colour on A4 paper. What will each side cost me?", True,
  "£0.30 per side (2025 notice; the outdated 2023 page said £0.40).", ["0.30"], ["doc-004", "doc-003"], "conflict"),
 # multi-hop
 ("What time does the library that holds the Chinese-language collection close on weekdays during the vacation?", True,
  "18:30. The Chinese collection is in the Science Library (Ferrier Building, doc-009, in Chinese), whose vacation weekday hours are 09:00-18:30.",
  ["18:30"], ["doc-009", "doc-002"], "multihop"),
 ("The reading room where only pencils are allowed is inside which library, and what time does that library close on term-time weekdays?", True,
  "The Special Collections reading room (Percival Room) is in the Law Library, Ashdown House, which closes at 21:00 on term weekdays.",
  ["Law Library", "21:00"], ["doc-007", "doc-002"], "multihop"),
 # exact codes
 ("What does kiosk code KSK-1043 mean?", True,
  "The item is on hold for another reader and cannot be borrowed; leave it on the kiosk shelf.", ["on hold"], ["doc-005"], "exact"),
 ("The kiosk shows KSK-1403 when I try to borrow a book. What is wrong?", True,
  "Your library card has expired (associate members renew it at the Welcome Point).", ["expired"], ["doc-005"], "exact"),
 # synonyms
 ("Can I use a fountain pen while studying manuscripts in the rare books room?", True,
  "No. The Special Collections reading room allows pencils only; ink pens are not permitted.", ["pencils only"], ["doc-007"], "synonym"),
 ("How can a visitor get on the wireless internet in the library?", True,
  "Connect to the MU-Guest network with a voucher code from the Issue Desk (valid 24 hours, one device).",
  ["MU-Guest"], ["doc-014"], "synonym"),
 # paraphrase
 ("For how many hours a day is a single group allowed to reserve a study room?", True,
  "At most 3 hours per day.", ["3 hours"], ["doc-012"], "paraphrase"),
 # long document: definition at the top governs a rule far below
 ("How many books can an alumnus have out at once?", True,
  "6 items: alumni are associate members (definition, section 1), and associate members may have up to 6 items on loan (section 9).",
  ["6 items"], ["doc-001"], "chunking"),
 ("How many times can I renew a printed music score?", True,
  "Twice: music scores are Category B items (section 1), which may be renewed twice unless reserved (section 10).",
  ["twice"], ["doc-001"], "chunking"),
 # PDF: a sentence split across the page break
 ("How long can I normally keep a book borrowed through interlibrary loan?", True,
  "Four weeks, renewable once if the lending library agrees.", ["four weeks"], ["doc-006"], "chunking"),
 # cross-language
 ("How much does the annual card for external readers cost?", True,
  "40 Euro, valid twelve months (only the German policy says so).", ["40 Euro"], ["doc-008"], "xlang"),
 ("On which day of the week does the language exchange corner for international students meet?", True,
  "Wednesdays, 4-6 pm, in room 3.05 of the Main Library (每周三下午4点至6点; only the Chinese guide says so).",
  ["周三"], ["doc-009"], "cjk"),
 ("科学图书馆在考试期间几点关门？", True, "凌晨2点（考试期间开放时间 08:00-02:00）。", ["02:00"], ["doc-002"], "cjk"),
 ("外部读者的年卡最多可以同时借几本书？", True, "最多4本（德语文件：bis zu vier Medien，每次14天）。", ["vier"], ["doc-008"], "cjk"),
 ("Wie lange darf man einen Laptop aus den Laptop-Schränken der Bibliothek ausleihen?", True,
  "6 Stunden (laptops are lent for 6 hours and must be returned before closing).", ["6 hours"], ["doc-014"], "xlang"),
 # how-to
 ("How do I request a book from another library through interlibrary loan?", True,
  "Check Library Search first, sign in and open the Interlibrary Loan request form, give the ISBN (or DOI) and the date needed, submit; an email arrives when the item does.",
  ["ISBN"], ["doc-006"], "howto"),
 ("What should Issue Desk staff do fifteen minutes before the Main Library closes?", True,
  "Make the closing announcement on the public address system.", ["closing announcement"], ["doc-010"], "howto"),
 # numbers with units
 ("What is the largest dataset I can deposit in the research data repository without approval?", True,
  "50 GB; larger datasets need the Research Data Manager's approval.", ["50 GB"], ["doc-017"], "number"),
 ("How far in advance must a seat in the Special Collections reading room be booked?", True,
  "At least 48 hours in advance.", ["48 hours"], ["doc-007"], "number"),
 ("If I lose a library book, what administration fee is added to the replacement price?", True,
  "£12.50.", ["12.50"], ["doc-018"], "number"),
 # yes/no with a condition
 ("Can I take photos of manuscripts in the Special Collections reading room?", True,
  "Yes, for personal research, without flash, after completing a photography permission form; publication needs the Keeper's written permission.",
  ["without flash"], ["doc-007"], "yesno"),
 ("Is interlibrary loan free for undergraduates?", True,
  "Partly: undergraduates receive 10 free requests per academic year; each further request costs GBP 3.00.",
  ["10 free requests"], ["doc-006"], "yesno"),
 # scenario
 ("I use a wheelchair and cannot reach the top shelves. How can the library help me get books?", True,
  "Register with the Disability Advice Service; library staff will fetch items from the shelves and bring them to the Issue Desk.",
  ["fetch"], ["doc-015"], "scenario"),
 # ACL
 ("What is the library's budget for printed and electronic books in 2025/26?", False,
  "Refuse: the figure is only in a finance-only document.", [], [], "acl"),
 ("What is the library's budget for printed and electronic books in 2025/26?", True,
  "£1,240,000 (up from £1,180,000 in 2024/25).", ["1,240,000"], ["doc-011"], "acl"),
 # unanswerable, on topic, with a near-miss in the docs
 ("How much does it cost to replace a lost library card?", False,
  "Not in the documents (the lost-items policy covers items, not cards; only kiosk JSON-LD keywords mention a card fee).", [], [], "unanswerable"),
 ("Is there a discount on the annual external reader card for pensioners?", False,
  "Not in the documents (the German policy gives 40 Euro, no concessions).", [], [], "unanswerable"),
 ("What are the Medical Library's opening hours on public holidays?", False,
  "Not in the documents (the hours table has term, vacation and exam columns only).", [], [], "unanswerable"),
 ("How much does the library charge for poster printing?", False,
  "Not in the documents (poster printing appears only in the 2023 page's JSON-LD and sidebar).", [], [], "unanswerable"),
 ("What does kiosk error code KSK-1304 mean?", False,
  "Not in the documents (KSK-1034, KSK-1043, KSK-1403 and KSK-1430 are listed; KSK-1304 is not).", [], [], "unanswerable"),
 ("What is the maximum embargo period for a PhD thesis deposited with the library?", False,
  "Not in the documents (the 24-month embargo applies to research datasets).", [], [], "unanswerable"),
 ("How many free interlibrary loan requests do taught master's students get?", False,
  "Not in the documents (research postgraduates: unlimited; undergraduates: 10).", [], [], "unanswerable"),
 ("What is the password for the guest Wi-Fi?", False,
  "Not in the documents (MU-Guest uses voucher codes from the Issue Desk).", [], [], "unanswerable"),
 ("What is the maximum number of students allowed in one group study room?", False,
  "Not in the documents (only the minimum of 3 is given).", [], [], "unanswerable"),
 ("中文馆藏共有多少册图书？", False, "文件中没有（只写了中文馆藏的位置）。", [], [], "unanswerable"),
]

with open("questions.jsonl", "w", encoding="utf-8") as fh:
    for i, (q, ans, gold, must, rel, trap) in enumerate(Q, 1):
        acl = ["staff", "finance"] if (trap == "acl" and ans) else S
        fh.write(json.dumps({"id": f"h{i:02d}", "question": q, "answerable": ans, "answer": gold,
                             "must_contain": must, "relevant": rel, "trap": trap, "user_acl": acl},
                            ensure_ascii=False) + "\n")
print(len(Q))
