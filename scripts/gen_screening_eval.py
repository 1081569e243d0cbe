#!/usr/bin/env python3
"""Generate labelled name-screening evaluation cases for Vigil from the real list files.

Reads the OFAC SDN (sdn.csv + alt.csv), UN consolidated XML, UK FCDO CSV, OpenSanctions
us_congress (Senzing JSON lines, PEP) and the OpenSanctions zala FtM sample, and writes
`fixtures/screening/eval.jsonl`: one JSON object per line, either a screening query with the
entity ids it must find (`expect`, empty for negatives) or a name pair with a match label.

Python 3.11, standard library only, deterministic (fixed seed; no dependence on hash order).

    python3 scripts/gen_screening_eval.py                 # generate, print stats and samples
    python3 scripts/gen_screening_eval.py --stats         # print stats of the existing file only
    python3 scripts/gen_screening_eval.py --data-dir DIR --out FILE --samples 3

See fixtures/screening/README.md for the format and the meaning of every category.
"""

from __future__ import annotations

import argparse
import collections
import csv
import functools
import json
import os
import random
import re
import sys
import unicodedata
import xml.etree.ElementTree as ET

SEED = 20250811

# --------------------------------------------------------------------------------------------
# Input files
# --------------------------------------------------------------------------------------------

LIST_LAYOUTS = {
    # renamed copies inside the repository
    "repo": {
        "sdn": "ofac/sdn.csv",
        "alt": "ofac/alt.csv",
        "un": "un/UN_consolidated.xml",
        "uk": "uk/UK_Sanctions_List.csv",
        "congress": "opensanctions/us_congress_senzing.json",
        "zala": "opensanctions/zala_entities.ftm.json",
    },
    # the shared data directory with the publishers' original file names
    "shared": {
        "sdn": "ofac_sdn_2024-05-03/sdn.csv",
        "alt": "ofac_sdn_2024-05-03/alt_2025-02-27.csv",
        "un": "un/UN_consolidated.xml",
        "uk": "uk/UK_Sanctions_List_FCDO_2025-08-11.csv",
        "congress": "opensanctions/us_congress_senzing.json",
        "zala": "opensanctions/zala_entities.ftm.json",
    },
}
REPO_LISTS = "/work/main/lists"
SHARED_LISTS = "/work/shared/data/sanctions"


def resolve_paths(data_dir: str | None) -> dict[str, str]:
    candidates = [data_dir] if data_dir else [REPO_LISTS, SHARED_LISTS]
    for d in candidates:
        if not d or not os.path.isdir(d):
            continue
        for layout in LIST_LAYOUTS.values():
            paths = {k: os.path.join(d, v) for k, v in layout.items()}
            if all(os.path.isfile(p) for p in paths.values()):
                return paths
    sys.exit(f"no complete set of list files found in {candidates}")


# --------------------------------------------------------------------------------------------
# Normalisation (mirrors the engine's rules closely enough for set equality)
# --------------------------------------------------------------------------------------------

HONORIFICS = set(
    "mr mrs ms miss mister dr doctor prof professor sir dame lord lady sheikh shaikh shaykh sheik "
    "mullah mulla maulvi maulana mawlawi imam hajji alhaji alhaja hon honorable honourable rev "
    "reverend general gen colonel col major maj captain capt lt lieutenant sgt sergeant admiral "
    "brigadier commander cmdr senator sen rep representative president minister excellency his "
    "her jr sr snr jnr esq phd md".split()
)

LEGAL_PHRASES = [
    (("obshchestvo", "s", "ogranichennoy", "otvetstvennostyu"), "llc"),
    (("obshchestvo", "s", "ogranichennoi", "otvetstvennostiu"), "llc"),
    (("obshestvo", "s", "ogranichennoy", "otvetstvennostyu"), "llc"),
    (("limited", "liability", "company"), "llc"),
    (("limited", "liability", "partnership"), "llp"),
    (("public", "joint", "stock", "company"), "pjsc"),
    (("closed", "joint", "stock", "company"), "jsc"),
    (("open", "joint", "stock", "company"), "jsc"),
    (("joint", "stock", "company"), "jsc"),
    (("aktsionernoe", "obshchestvo"), "jsc"),
    (("aktsionernoye", "obshchestvo"), "jsc"),
    (("public", "limited", "company"), "plc"),
    (("private", "limited", "company"), "ltd"),
    (("societe", "anonyme"), "sa"),
    (("sociedad", "anonima"), "sa"),
    (("co", "ltd"), "ltd"),
    (("company", "limited"), "ltd"),
    (("pvt", "ltd"), "ltd"),
    (("pte", "ltd"), "ltd"),
    (("sdn", "bhd"), "ltd"),
    (("s", "a"), "sa"),
    (("l", "l", "c"), "llc"),
]
LEGAL_SINGLE = {}
for _canon, _words in {
    "ltd": "ltd limited ltda pvt pte bhd pty kk yk tbk",
    "llc": "llc ooo tov too sro gmbh sarl srl spzoo doo",
    "jsc": "jsc ao zao oao ojsc cjsc ag as asa ab oy nv bv",
    "pjsc": "pjsc pao",
    "plc": "plc",
    "inc": "inc incorporated",
    "corp": "corp corporation",
    "co": "co company cie",
    "sa": "sa sae sal spa sas sab",
    "llp": "llp lp",
    "fze": "fze fzco fzc fzllc dmcc",
}.items():
    for _w in _words.split():
        LEGAL_SINGLE[_w] = _canon
LEGAL_CANON = set(LEGAL_SINGLE.values())

JOINERS = "'`´‘’ʼʻʹʾʿ\""


def fold(s: str) -> str:
    """Strip diacritics, keep every script."""
    s = unicodedata.normalize("NFKD", s)
    return "".join(c for c in s if not unicodedata.combining(c))


def raw_words(name: str) -> list[str]:
    s = fold(name).lower()
    for j in JOINERS:
        s = s.replace(j, "")
    s = s.replace("ß", "ss")
    return [w for w in re.split(r"[^\w]+|_", s) if w]


def normalize(name: str) -> list[str]:
    """Lower-case tokens, legal forms canonical, honorifics dropped when other tokens remain."""
    words = raw_words(name)
    out: list[str] = []
    i = 0
    while i < len(words):
        for phrase, canon in LEGAL_PHRASES:
            if tuple(words[i : i + len(phrase)]) == phrase:
                out.append(canon)
                i += len(phrase)
                break
        else:
            w = words[i]
            out.append(LEGAL_SINGLE.get(w, w))
            i += 1
    kept = [t for t in out if t not in HONORIFICS]
    return kept if kept else out


def tokset(name: str) -> frozenset[str]:
    return frozenset(normalize(name))


def content_tokens(name: str) -> list[str]:
    """Tokens without legal forms (for fuzzy checks)."""
    return [t for t in normalize(name) if t not in LEGAL_CANON]


def is_latin(s: str) -> bool:
    for c in s:
        if c.isalpha():
            try:
                if "LATIN" not in unicodedata.name(c):
                    return False
            except ValueError:
                return False
    return True


def script_of(s: str) -> str:
    counts = collections.Counter()
    for c in s:
        if c.isalpha():
            try:
                counts[unicodedata.name(c).split()[0]] += 1
            except ValueError:
                pass
    return counts.most_common(1)[0][0] if counts else "NONE"


# --------------------------------------------------------------------------------------------
# String similarity
# --------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def jaro_winkler(a: str, b: str) -> float:
    if a == b:
        return 1.0
    la, lb = len(a), len(b)
    if not la or not lb:
        return 0.0
    window = max(la, lb) // 2 - 1
    window = max(window, 0)
    ma = [False] * la
    mb = [False] * lb
    matches = 0
    for i, ca in enumerate(a):
        lo, hi = max(0, i - window), min(lb, i + window + 1)
        for j in range(lo, hi):
            if not mb[j] and b[j] == ca:
                ma[i] = mb[j] = True
                matches += 1
                break
    if not matches:
        return 0.0
    t = 0
    k = 0
    for i in range(la):
        if ma[i]:
            while not mb[k]:
                k += 1
            if a[i] != b[k]:
                t += 1
            k += 1
    t /= 2
    jaro = (matches / la + matches / lb + (matches - t) / matches) / 3
    prefix = 0
    for ca, cb in zip(a[:4], b[:4]):
        if ca != cb:
            break
        prefix += 1
    return jaro + prefix * 0.1 * (1 - jaro)


def levenshtein(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


# Spelling-variant groups: members are the same name. Used both to generate transliteration
# variants and (as a canonical key) to refuse "different name" replacements that are not.
VARIANT_GROUPS = [
    "mohammed muhammad mohamed mohamad mohammad muhammed mohammod mouhamed",
    "ahmed ahmad ahmet",
    "abdul abdel abdal abdoul",
    "hussein husain hussain husayn hossein hosein hussien",
    "hassan hasan hasen",
    "qaddafi gaddafi kadhafi gadhafi qadhafi kaddafi",
    "muammar moammar muamar",
    "osama usama oussama",
    "yusuf yousef youssef yousif yussuf yusef",
    "omar umar oumar",
    "othman uthman osman usman",
    "abu abou",
    "bin ben",
    "ibrahim ebrahim ibraheem",
    "khalid khaled",
    "mustafa mostafa moustafa mustapha",
    "mahmoud mahmud mahmood",
    "abdullah abdallah abdulla",
    "rahman rehman",
    "saeed said saied",
    "hamid hameed",
    "rashid rasheed rachid",
    "majid majeed",
    "walid waleed oualid",
    "jamil jameel djamil",
    "jamal gamal djamal",
    "farid fareed",
    "zayd zaid zeid",
    "sulaiman sulayman suleiman soliman sulejman",
    "ismail ismael",
    "hamza hamzah",
    "ali aly",
    "laden ladin",
    "qaida qaeda",
    "hizballah hezbollah hizbullah hizbollah",
    "yuri yury yuriy iurii",
    "aleksandr alexander aleksander alexandr oleksandr",
    "sergei sergey serguei serhiy",
    "andrei andrey andriy",
    "alexei aleksei alexey aleksey oleksiy",
    "dmitry dmitri dmitriy dmitrii",
    "evgeny yevgeny evgeniy yevgeniy evgenii",
    "nikolai nikolay mykola",
    "vyacheslav viacheslav",
    "tatiana tatyana",
    "natalia natalya",
    "yulia yuliya iuliia julia",
    "maksim maxim",
    "mikhail michail mykhailo",
    "fyodor fedor",
    "pyotr petr",
    "elena yelena olena",
    "ekaterina yekaterina",
    "lukashenko lukashenka",
]
NICKNAMES = {
    "robert": "bob rob bobby",
    "william": "bill will billy",
    "elizabeth": "liz beth betsy",
    "james": "jim jimmy",
    "michael": "mike",
    "richard": "dick rick",
    "thomas": "tom tommy",
    "joseph": "joe",
    "charles": "chuck charlie",
    "christopher": "chris",
    "daniel": "dan danny",
    "david": "dave",
    "edward": "ed ted",
    "gerald": "jerry",
    "gregory": "greg",
    "jeffrey": "jeff",
    "kenneth": "ken",
    "lawrence": "larry",
    "matthew": "matt",
    "nicholas": "nick",
    "patrick": "pat",
    "peter": "pete",
    "ronald": "ron",
    "samuel": "sam",
    "steven": "steve",
    "stephen": "steve",
    "timothy": "tim",
    "anthony": "tony",
    "andrew": "andy",
    "benjamin": "ben",
    "frederick": "fred",
    "donald": "don",
    "douglas": "doug",
    "katherine": "kathy kate",
    "catherine": "cathy kate",
    "margaret": "peggy maggie",
    "deborah": "debbie deb",
    "patricia": "pat patty",
    "rebecca": "becky",
    "susan": "sue",
    "jennifer": "jen jenny",
    "kimberly": "kim",
    "cynthia": "cindy",
    "theodore": "ted",
    "alexander": "alex",
    "joshua": "josh",
    "jonathan": "jon",
    "randall": "randy",
    "raymond": "ray",
    "eugene": "gene",
    "henry": "hank",
    "walter": "walt",
    "vincent": "vince",
    "leonard": "len",
    "bradley": "brad",
    "mitchell": "mitch",
    "russell": "russ",
    "philip": "phil",
    "jacob": "jake",
    "gerard": "gerry",
    "frank": "",
    "albert": "al",
    "abraham": "abe",
    "harold": "hal",
    "dennis": "denny",
    "terence": "terry",
    "zachary": "zach",
    "valerie": "val",
    "victoria": "vicky",
    "pamela": "pam",
    "sandra": "sandy",
    "judith": "judy",
    "carolyn": "carol",
}
# Russian / Belarusian / Ukrainian forms of one given name: never "a different name".
EQUIV_ONLY_GROUPS = [
    "vyacheslav viacheslav viachaslau vyachaslau",
    "denis dzianis dzyanis denys",
    "dmitry dzmitry dmitro dmytro",
    "aleksandr aliaksandr aliaksandar aleksandar alyaksandr oleksandr alexandru",
    "sergey siarhei serhii sergii syarhei",
    "vladimir uladzimir volodymyr uladzimer",
    "alexei aliaksei oleksii aliaksey",
    "nikolai mikalai mykola",
    "yuri iury yurii yuriy",
    "viktor viktar",
    "vasily vasil vasyl vasili vasiliy vasilii",
    "andrey andrei andrii andriy",
    "pavel paval pavlo paul",
    "pyotr piotr petro petr",
    "mikhail mikhailo mikhas mykhailo",
    "igor ihar ihor",
    "oleg aleh oleh",
    "anatoly anatol anatolii anatoliy",
    "leonid leanid",
    "gennady henadz genadz gennadiy hennadiy gennadii",
    "grigory ryhor hryhorii grigoriy",
    "konstantin kanstantsin kostiantyn kostyantyn",
    "valery valer valeriy valerii",
    "evgeny yauhen yevhen yevheniy",
    "natalia natallia nataliya",
    "olga volha olha",
    "tatiana tatsiana tetiana tetyana",
    "elena alena alyona olena",
    "svetlana sviatlana",
    "irina iryna iryna",
    "lyudmila liudmila ludmila",
    "anna hanna",
    "maria maryia mariya mariia",
    "ivan ivan",
    "boris barys",
    "maxim maksim maksym",
    "stanislav stanislau",
    "yaroslav yaraslau",
    "anton antonio",
]
CANON: dict[str, str] = {}
for _g in EQUIV_ONLY_GROUPS:
    _m = _g.split()
    for _w in _m:
        CANON.setdefault(_w, _m[0])
for _g in VARIANT_GROUPS:
    _m = _g.split()
    _key = next((CANON[_w] for _w in _m if _w in CANON), _m[0])
    for _w in _m:
        CANON.setdefault(_w, _key)
NICK_OF: dict[str, list[str]] = {}
FORMAL_OF: dict[str, list[str]] = collections.defaultdict(list)
for _f, _ns in NICKNAMES.items():
    NICK_OF[_f] = _ns.split()
    for _n in _ns.split():
        FORMAL_OF[_n].append(_f)
        CANON.setdefault(_n, CANON.get(_f, _f))


def canon(tok: str) -> str:
    return CANON.get(tok, tok)


_SKEL_DIGRAPHS = [
    ("shch", "s"), ("sch", "s"), ("tch", "c"), ("kh", "k"), ("gh", "g"), ("sh", "s"),
    ("ch", "c"), ("zh", "j"), ("dj", "j"), ("th", "t"), ("dh", "d"), ("ph", "f"), ("ck", "k"),
    ("ts", "s"), ("tz", "s"), ("x", "ks"), ("q", "k"), ("z", "s"), ("w", "v"), ("j", "g"),
]


@functools.lru_cache(maxsize=None)
def skeleton(tok: str) -> str:
    """A coarse consonant skeleton: romanisation variants of one name usually agree on it."""
    s = canon(tok)
    if s.startswith(("al", "el")) and len(s) > 5:
        s = s[2:]
    for a, b in _SKEL_DIGRAPHS:
        s = s.replace(a, b)
    s = re.sub(r"[aeiouyh']", "", s)
    s = re.sub(r"(.)\1+", r"\1", s)
    return s


@functools.lru_cache(maxsize=None)
def tok_similar(a: str, b: str) -> bool:
    """Liberal "could be the same name part" test (used to keep negatives clean)."""
    if a == b or canon(a) == canon(b):
        return True
    if len(a) >= 4 and len(b) >= 4:
        sa, sb = skeleton(a), skeleton(b)
        if len(sa) >= 2 and sa == sb:
            return True
        if jaro_winkler(a, b) >= 0.88:
            return True
    return False


# --------------------------------------------------------------------------------------------
# Entities
# --------------------------------------------------------------------------------------------

PARTICLES = set(
    "al el ul bin ben ibn abu abou abd abdul abdel bint umm ould de del della da dos das do van "
    "von der den la le di du".split()
)


class Ent:
    __slots__ = (
        "id", "list", "kind", "etype", "primary", "aliases", "given", "surname", "countries",
        "culture", "program", "orig_script", "target", "all_names",
    )

    def __init__(self, id_, list_, kind, etype, primary):
        self.id = id_
        self.list = list_
        self.kind = kind  # sanction | pep
        self.etype = etype  # individual | entity | vessel | aircraft
        self.primary = primary
        self.aliases: list[str] = []  # strong aliases, Latin script
        self.given: list[str] | None = None  # name units, natural order
        self.surname: list[str] | None = None
        self.countries: list[str] = []
        self.culture = ""
        self.program = ""
        self.orig_script: list[str] = []  # real non-Latin names published for the entity
        self.target = True
        self.all_names: list[str] = []  # every strong name (any script) for linkage

    def natural(self) -> str | None:
        if self.given is None:
            return None
        return " ".join(self.given + self.surname)


def units(text: str) -> list[str]:
    """Whitespace tokens with particles glued to the following token ("ABD AL-GHAFUR")."""
    toks = text.split()
    out: list[str] = []
    pending: list[str] = []
    for i, t in enumerate(toks):
        if t.lower().strip(".'’`") in PARTICLES and i < len(toks) - 1:
            pending.append(t)
            continue
        out.append(" ".join(pending + [t]))
        pending = []
    if pending:
        out.append(" ".join(pending))
    return out


def clean_entity_name(name: str) -> str:
    """Drop parenthesised acronyms and ' / ACRONYM' or '; second name' parts."""
    s = re.sub(r"\([^)]*\)", " ", name)
    s = re.split(r"\s[;/]\s|;", s)[0]
    return re.sub(r"\s+", " ", s).strip(" ,")


def split_comma_name(name: str):
    """'LAST, First Middle[, Jr.]' -> (given units, surname units)."""
    if "," not in name:
        u = units(name)
        if len(u) < 2:
            return None
        return u[:-1], u[-1:]
    last, rest = name.split(",", 1)
    given = rest.split(",")[0].strip()
    if not given or not last.strip():
        return None
    return units(given), units(last.strip())


ARABIC_TOKENS = set(
    "mohammed muhammad mohamed mohamad mohammad muhammed ahmed ahmad abdul abd abu bin ibn ali "
    "hassan hasan hussein husain hussain husayn omar umar osama usama ibrahim khalid khaled "
    "mustafa mostafa mahmoud mahmud abdullah abdallah yusuf yousef youssef salim salem rahman "
    "hamid rashid said saeed jamal khalil aziz karim hamza ismail sulaiman suleiman qasim qassem "
    "nasser nasir walid faisal majid adel abdel haji hajji mullah sayed sayyid sheikh abdulaziz "
    "abdulrahman zaid zayd yasin yassin tariq musa isa issa yahya ayman anwar akhund haqqani "
    "mansur mansour noor nur ullah hossein hosseini reza mohsen ghulam abbas ali jafar jaafar "
    "hadi mahdi mehdi salah saleh fadi fadel fadl hamad hamed hamdan nabil samir sami adnan "
    "amin amir anas asad assad bashar bassam bilal fahd faris firas ghazi habib hani haidar "
    "haydar hisham imad issam jaber jabir jamil kamal karam khaldun latif lutfi maher mahir "
    "marwan mazen munir murad nadim naji nasr nizar omran qais rami riad riyad saad sabri sadiq "
    "safwan said sakr salman samer shadi shakir sharif suhail talal tamer tawfiq usman uthman "
    "waleed wael yaser yasser yasir zakaria ziad zuhair abdelaziz abdelkader abdulkadir "
    "abdulhadi abdulkarim abdelkarim abdelhamid abdulhamid abdelmalek hezbollah hizballah qaida "
    "qaeda jihad ansar islamiya shabaab".split()
)
ARABIC_PROGRAMS = ("IRAQ", "SYRIA", "LIBYA", "YEMEN", "IRAN", "IRGC", "IFSR", "LEBANON",
                   "HIZBALLAH", "Iraq", "Syria", "Libya", "Yemen", "Iran")
SLAVIC_PROGRAMS = ("RUSSIA", "UKRAINE", "BELARUS", "CAATSA - RUSSIA", "MAGNIT", "Russia",
                   "Belarus", "CYBER", "Cyber", "ELECTION")
SPANISH_PROGRAMS = ("SDNT", "SDNTK", "ILLICIT-DRUGS", "VENEZUELA", "CUBA", "NICARAGUA", "TCO",
                    "Venezuela", "Nicaragua")
KOREAN_PROGRAMS = ("DPRK", "Democratic People's Republic of Korea")
KOREAN_SURNAMES = set(
    "kim ri pak park choe choi jang chang kang jon han o ryu yun so hwang ho paek sin song "
    "hyon mun ra ko kwon yang chon ju im cha yu jo cho".split()
)
BURMESE_PROGRAMS = ("BURMA", "Myanmar")


def guess_culture(name: str, program: str, ref: str = "") -> str:
    toks = normalize(name)
    if any(re.search(r"(ovich|evich|ovna|evna|yevna|ievna|ivich|avich)$", t) for t in toks):
        return "slavic"
    if (any(t in ARABIC_TOKENS for t in toks) or re.search(r"\b(al|el)-", name.lower())
            or any(re.match(r"(abd|abu)[a-z]{3,}$|[a-z]{3,}(ullah|allah|uddin|eddine)$", t) for t in toks)):
        return "arabic"
    if any(p in program for p in KOREAN_PROGRAMS) or ref.startswith("un:KP"):
        return "korean"
    if any(p in program for p in BURMESE_PROGRAMS):
        return "burmese"
    if any(p in program for p in SLAVIC_PROGRAMS):
        if any(re.search(r"(ov|ev|ova|eva|in|ina|sky|skiy|skaya|enko|uk|ko|ich)$", t) for t in toks):
            return "slavic"
    if any(p in program for p in SPANISH_PROGRAMS):
        return "spanish"
    if any(p in program for p in ARABIC_PROGRAMS) or ref.startswith(("un:IQ", "un:LY", "un:YE", "un:IR")):
        return "arabic"
    if any(re.search(r"(ov|ova|yev|yeva|enko|skiy|skaya)$", t) for t in toks):
        return "slavic"
    return "other"


UN_COUNTRIES = {
    "Afghanistan": "af", "Iraq": "iq", "Democratic People's Republic of Korea": "kp",
    "Indonesia": "id", "Democratic Republic of the Congo": "cd", "Tunisia": "tn",
    "Pakistan": "pk", "Algeria": "dz", "Yemen": "ye", "Philippines": "ph", "Libya": "ly",
    "Egypt": "eg", "Somalia": "so", "Saudi Arabia": "sa", "Rwanda": "rw",
    "Russian Federation": "ru", "Sudan": "sd", "Guinea-Bissau": "gw", "Morocco": "ma",
    "Central African Republic": "cf", "Kuwait": "kw", "Uganda": "ug", "South Sudan": "ss",
    "Haiti": "ht", "France": "fr", "Iran (Islamic Republic of)": "ir", "Jordan": "jo",
    "Germany": "de", "Mali": "ml", "Qatar": "qa", "Syrian Arab Republic": "sy",
    "Mauritania": "mr", "State of Palestine": "ps", "United Republic of Tanzania": "tz",
    "Chad": "td", "Eritrea": "er", "Malaysia": "my", "Georgia": "ge", "Trinidad and Tobago": "tt",
    "Kenya": "ke", "Congo": "cg", "India": "in", "China": "cn", "Uzbekistan": "uz",
    "Nigeria": "ng", "Tajikistan": "tj", "Ethiopia": "et",
}


def load_ofac(paths) -> list[Ent]:
    raw = open(paths["sdn"], encoding="utf-8", newline="").read().replace("\x1a", "")
    ents: dict[str, Ent] = {}
    for r in csv.reader(raw.splitlines()):
        if not r or not r[0].strip().isdigit():
            continue
        r = [("" if x.strip() == "-0-" else x.strip()) for x in r]
        etype = {"individual": "individual", "vessel": "vessel", "aircraft": "aircraft"}.get(
            r[2].lower(), "entity")
        e = Ent(f"ofac-sdn:{r[0]}", "ofac-sdn", "sanction", etype, r[1])
        e.program = r[3]
        if etype == "individual":
            st = split_comma_name(r[1])
            if st:
                e.given, e.surname = st
        ents[r[0]] = e
    for r in csv.reader(open(paths["alt"], encoding="utf-8", newline="").read()
                        .replace("\x1a", "").splitlines()):
        if len(r) < 4 or not r[0].strip().isdigit() or r[0].strip() not in ents:
            continue
        name = r[3].strip()
        if name and name != "-0-":
            ents[r[0].strip()].aliases.append(name)
    return list(ents.values())


def load_un(paths) -> list[Ent]:
    root = ET.parse(paths["un"]).getroot()
    out = []
    for section, etype in (("INDIVIDUALS", "individual"), ("ENTITIES", "entity")):
        for x in root.find(section):
            ref = x.findtext("REFERENCE_NUMBER").strip()
            parts = [(x.findtext(t) or "").strip() for t in
                     ("FIRST_NAME", "SECOND_NAME", "THIRD_NAME", "FOURTH_NAME")]
            parts = [p for p in parts if p]
            name = " ".join(parts)
            e = Ent(f"un:{ref}", "un", "sanction", etype, name)
            e.program = x.findtext("UN_LIST_TYPE") or ""
            if etype == "individual":
                if ref.startswith("KP") and len(parts) >= 2:
                    # Korean names are stored surname first.
                    e.given, e.surname = units(" ".join(parts[1:])), units(parts[0])
                elif len(parts) >= 2:
                    # FIRST_NAME is the given name even when it has two words ("ABDUL KABIR")
                    e.given = [parts[0]] + units(" ".join(parts[1:-1]))
                    e.surname = units(parts[-1])
                nats = [v.text.strip() for v in x.findall("NATIONALITY/VALUE") if v.text]
                if len(nats) == 1 and nats[0] in UN_COUNTRIES:
                    e.countries = [UN_COUNTRIES[nats[0]]]
                for a in x.findall("INDIVIDUAL_ALIAS"):
                    if (a.findtext("QUALITY") or "") == "Good" and (a.findtext("ALIAS_NAME") or "").strip():
                        e.aliases.append(a.findtext("ALIAS_NAME").strip())
            else:
                for a in x.findall("ENTITY_ALIAS"):
                    if (a.findtext("QUALITY") or "") in ("a.k.a.", "f.k.a.") and (a.findtext("ALIAS_NAME") or "").strip():
                        e.aliases.append(a.findtext("ALIAS_NAME").strip())
            osn = (x.findtext("NAME_ORIGINAL_SCRIPT") or "").strip()
            if osn and not is_latin(osn):
                e.orig_script.append(osn)
            out.append(e)
    return out


def load_uk(paths) -> list[Ent]:
    out = []
    for r in csv.DictReader(open(paths["uk"], encoding="utf-8", newline="")):
        t = {"Individual": "individual", "Entity": "entity", "Ship": "vessel"}.get(r["Type"].strip())
        if not t:
            continue
        name = re.sub(r"\s+", " ", r["Name"]).strip()
        e = Ent(f"uk:{r['Unique ID'].strip()}", "uk", "sanction", t, name)
        e.program = r["Regime Name"]
        if t == "individual":
            toks = name.split()
            if len(toks) >= 2 and "Korea" not in e.program:
                # The UK sheet puts the surname first; a run of upper-case words before
                # mixed-case ones is a multi-word surname ("MOHAMMAD JAN Abdul Kabir").
                lead = 0
                while lead < len(toks) and toks[lead].isupper():
                    lead += 1
                if 0 < lead < len(toks):
                    sur, giv = " ".join(toks[:lead]), " ".join(toks[lead:])
                else:
                    u = units(name)
                    n_sur = 2 if (any(p in e.program for p in SPANISH_PROGRAMS) and len(u) >= 4) else 1
                    sur, giv = " ".join(u[:n_sur]), " ".join(u[n_sur:])
                if giv:
                    e.given, e.surname = units(giv), units(sur)
        out.append(e)
    return out


def load_congress(paths) -> list[Ent]:
    out = []
    for line in open(paths["congress"], encoding="utf-8"):
        if not line.strip():
            continue
        r = json.loads(line)
        if r.get("RECORD_TYPE") != "PERSON":
            continue
        names = [n["NAME_FULL"] for n in r.get("NAMES", []) if n.get("NAME_FULL")]
        if not names:
            continue
        e = Ent(f"us-congress:{r['RECORD_ID']}", "us-congress", "pep", "individual", names[0])
        e.aliases = names[1:]
        e.countries = ["us"]
        toks = [t for t in names[0].split() if t.rstrip(".,").lower() not in ("jr", "sr", "ii", "iii", "iv")]
        toks = [t.rstrip(",") for t in toks]
        if len(toks) >= 2:
            e.given, e.surname = toks[:-1], toks[-1:]
        out.append(e)
    return out


ZALA_TRANSLATED = re.compile(
    r"(?i)\b(kft|tarsasag|yhtio|societatea|sociedade|sociedad|societe|koncern|konserni|"
    r"koncernen|groupe|responsabilidad|responsabilite|raspundere|kalasznikow|nelkuli|omilos)\b|"
    r"yhtio|koncernen|konserni")


def load_zala(paths) -> list[Ent]:
    out = []
    for line in open(paths["zala"], encoding="utf-8"):
        if not line.strip():
            continue
        r = json.loads(line)
        schema = r.get("schema")
        if schema not in ("Person", "Company", "Organization", "LegalEntity"):
            continue
        p = r.get("properties", {})
        etype = "individual" if schema == "Person" else "entity"
        names = []
        for key in ("name", "alias", "previousName"):
            for n in p.get(key, []):
                n = n.strip()
                if n and n not in names and "cuideachta" not in n.lower():
                    names.append(n)
        # translations of a company name into Hungarian, Finnish, Romanian, ... are published
        # names but not something a payment would carry: not used as query sources
        latin = [n for n in names if is_latin(n) and not ZALA_TRANSLATED.search(fold(n))]
        primary = r.get("caption") or names[0]
        e = Ent(f"zala:{r['id']}", "zala", "sanction", etype, primary)
        e.target = bool(r.get("target"))
        e.aliases = [n for n in latin if n != primary]
        e.orig_script = [n for n in names if script_of(n) == "CYRILLIC"]
        e.countries = sorted(set(p.get("country", []) + p.get("jurisdiction", []) + p.get("nationality", [])))
        e.program = "Russia"
        e.all_names = names
        if etype == "individual":
            comma = [n for n in latin if "," in n]
            if comma:
                st = split_comma_name(comma[0])
                e.primary = comma[0]  # the structured form is one of the published names
                if st:
                    e.given, e.surname = [u.title() if u.isupper() else u for u in st[0]], \
                                         [u.title() if u.isupper() else u for u in st[1]]
        out.append(e)
    return out


# --------------------------------------------------------------------------------------------
# Indexes
# --------------------------------------------------------------------------------------------


class World:
    def __init__(self, ents: list[Ent]):
        self.ents = ents
        self.by_id = {e.id: e for e in ents}
        for e in ents:
            if not e.all_names:
                e.all_names = [e.primary] + e.aliases + e.orig_script
            e.culture = guess_culture(e.natural() or e.primary, e.program, e.id)
        # exact token sets of every strong name, per kind
        self.set_owner: dict[tuple[str, frozenset], set[str]] = collections.defaultdict(set)
        self.names: dict[str, list[tuple[str, list[str], str]]] = {"sanction": [], "pep": []}
        self.post: dict[str, dict[str, set[int]]] = {"sanction": collections.defaultdict(set),
                                                      "pep": collections.defaultdict(set)}
        for e in ents:
            for n in e.all_names:
                ts = tokset(n)
                if ts:
                    self.set_owner[(e.kind, ts)].add(e.id)
                ct = content_tokens(n)
                if not ct:
                    continue
                idx = len(self.names[e.kind])
                self.names[e.kind].append((e.id, ct, e.etype))
                for t in ct:
                    self.post[e.kind][t].add(idx)
        self.linked: dict[str, set[str]] = {}
        for e in ents:
            ids = {e.id}
            for n in e.all_names:
                ts = tokset(n)
                if ts:
                    ids |= self.set_owner[(e.kind, ts)]
            self.linked[e.id] = ids
        self.person_vocab = set()
        for e in ents:
            if e.etype == "individual" and e.kind == "sanction":
                for n in [e.primary] + e.aliases:
                    self.person_vocab.update(normalize(n))
        self.vocab = set()
        for kind in self.post:
            self.vocab |= set(self.post[kind])
        self._neigh: dict[tuple[str, str], set[str]] = {}
        self.by_first: dict[str, dict[str, list[str]]] = {}
        self.by_skel: dict[str, dict[str, list[str]]] = {}
        for kind in self.post:
            bf = collections.defaultdict(list)
            bs = collections.defaultdict(list)
            for t in self.post[kind]:
                bf[t[:1]].append(t)
                bs[skeleton(t)].append(t)
                c = canon(t)
                if c != t:
                    bs["=" + c].append(t)
            self.by_first[kind] = bf
            self.by_skel[kind] = bs

    def expect(self, ent: Ent, variant: str | None = None) -> list[str]:
        ids = set(self.linked[ent.id])
        if variant is not None and is_latin(variant):
            ts = tokset(variant)
            if ts:
                ids |= self.set_owner.get((ent.kind, ts), set())
        return sorted(ids)

    def neighbours(self, tok: str, kind: str) -> set[str]:
        key = (kind, tok)
        if key in self._neigh:
            return self._neigh[key]
        out = set()
        if tok in self.post[kind]:
            out.add(tok)
        c = canon(tok)
        out.update(self.by_skel[kind].get("=" + c, []))
        if c in self.post[kind]:
            out.add(c)
        if len(tok) >= 4:
            sk = skeleton(tok)
            if len(sk) >= 2:
                out.update(t for t in self.by_skel[kind].get(sk, []) if len(t) >= 4)
            for t in self.by_first[kind].get(tok[:1], []):
                if len(t) >= 4 and abs(len(t) - len(tok)) <= 3 and jaro_winkler(tok, t) >= 0.88:
                    out.add(t)
        self._neigh[key] = out
        return out

    def _postings(self, tok: str, kind: str) -> set[int]:
        s: set[int] = set()
        for n in self.neighbours(tok, kind):
            s |= self.post[kind][n]
        return s

    @staticmethod
    def _cover(small: list[str], big: list[str]) -> bool:
        """Every token of `small` similar to a distinct token of `big` (greedy)."""
        used = [False] * len(big)
        for s in sorted(small, key=len, reverse=True):
            for i, b in enumerate(big):
                if not used[i] and tok_similar(s, b):
                    used[i] = True
                    break
            else:
                return False
        return True

    def exactly_listed(self, name: str) -> bool:
        """Whether one listed name (any kind) holds every content token of `name` exactly."""
        q = content_tokens(name)
        for kind in ("sanction", "pep"):
            cand = None
            for t in q:
                p = self.post[kind].get(t, set())
                cand = p if cand is None else cand & p
                if not cand:
                    break
            if cand:
                return True
        return False

    def collides(self, name: str, kind: str, entity_mode: bool = False,
                 ignore_ids: set[str] | None = None) -> str | None:
        """Why a would-be negative might really be a listed name (None when clean)."""
        q = content_tokens(name)
        if entity_mode:
            q = [t for t in q if t not in GENERIC_WORDS]
        if not q:
            return "no distinctive token"
        # (a) the query's tokens all appear (fuzzily) in one listed name
        cand = None
        for t in q:
            p = self._postings(t, kind)
            cand = p if cand is None else cand & p
            if not cand:
                break
        for idx in sorted(cand or ()):
            eid, toks, _ = self.names[kind][idx]
            if ignore_ids and eid in ignore_ids:
                continue
            if self._cover(q, toks):
                return f"subset of {eid} {' '.join(toks)}"
        # (b) a listed name is (fuzzily) contained in the query
        allq = content_tokens(name)
        union: set[int] = set()
        for t in allq:
            union |= self._postings(t, kind)
        for idx in sorted(union):
            eid, toks, etype = self.names[kind][idx]
            if ignore_ids and eid in ignore_ids:
                continue
            dist = [t for t in toks if t not in GENERIC_WORDS] if entity_mode else toks
            # a listed name made only of generic words ("INVEST GROUP") still counts when it
            # has two or more words: the query would contain the whole listed name
            if (not dist and len(toks) < 2) or len(toks) > len(allq):
                continue
            if len(toks) == 1 and (len(toks[0]) < 4):
                continue
            if self._cover(toks, allq):
                return f"contains {eid} {' '.join(toks)}"
        return None

    def ambiguous(self, variant: str, kind: str, allowed: set[str]) -> bool:
        """The variant's exact tokens are a subset of a name of some other entity."""
        ts = [t for t in content_tokens(variant) if len(t) > 1]
        if not ts:
            return True
        cand = None
        for t in ts:
            p = self.post[kind].get(t, set())
            cand = set(p) if cand is None else cand & p
            if not cand:
                return False
        return any(self.names[kind][i][0] not in allowed for i in cand)


# --------------------------------------------------------------------------------------------
# Name pools
# --------------------------------------------------------------------------------------------

POOLS = {
    "english": (
        "James John Robert Michael William David Richard Joseph Thomas Charles Christopher Daniel "
        "Matthew Anthony Mark Donald Steven Paul Andrew Joshua Kenneth Kevin Brian George Timothy "
        "Ronald Edward Jason Jeffrey Ryan Jacob Gary Nicholas Eric Jonathan Stephen Larry Justin "
        "Scott Brandon Mary Patricia Jennifer Linda Elizabeth Barbara Susan Jessica Sarah Karen "
        "Lisa Nancy Betty Margaret Sandra Ashley Kimberly Emily Donna Michelle Carol Amanda "
        "Dorothy Melissa Deborah",
        "Smith Johnson Williams Brown Jones Miller Davis Wilson Anderson Taylor Thomas Moore "
        "Jackson Martin Thompson White Harris Clark Lewis Robinson Walker Young Allen King Wright "
        "Scott Hill Green Adams Baker Nelson Carter Mitchell Roberts Turner Phillips Campbell "
        "Parker Evans Edwards Collins Stewart Morris Murphy Cook Rogers Morgan Peterson Cooper "
        "Reed Bailey Bell Kelly Howard Ward Cox Richardson Wood Watson Brooks Bennett Gray Hughes "
        "Price Sanders",
    ),
    "spanish": (
        "José Juan Carlos Luis Jorge Miguel Pedro Alejandro Fernando Javier Francisco Antonio "
        "Manuel Ricardo Eduardo Roberto Sergio Andrés Diego Pablo Raúl Gustavo Héctor Óscar Rafael "
        "Enrique Víctor Mario Alberto Daniel María Carmen Ana Lucía Sofía Isabel Laura Marta Elena "
        "Paula Rosa Patricia Gabriela Valentina Camila Daniela Fernanda Adriana Claudia Mónica "
        "Verónica Silvia Beatriz Teresa Pilar Natalia Alejandra Andrea Carolina Mariana",
        "García Rodríguez Martínez Hernández López González Pérez Sánchez Ramírez Torres Flores "
        "Rivera Gómez Díaz Reyes Morales Cruz Ortiz Gutiérrez Chávez Ramos Ruiz Jiménez Mendoza "
        "Álvarez Castillo Vargas Romero Herrera Medina Aguilar Moreno Vázquez Castro Suárez Rojas "
        "Navarro Domínguez Muñoz Molina Delgado Ortega Guerrero Salazar Peña Cabrera Campos Vega "
        "Fuentes Cortés Soto Espinoza Sandoval Carrillo Ibarra Iglesias Serrano Blanco Marín Rubio",
    ),
    "nigerian": (
        "Chinedu Emeka Ngozi Chiamaka Oluwaseun Adebayo Olumide Folake Funmilayo Yetunde Babatunde "
        "Adewale Temitope Chukwuemeka Ifeanyi Obinna Uchenna Nnamdi Chidi Ikechukwu Adaeze Nkechi "
        "Amaka Chioma Ebere Kelechi Tochukwu Ayodele Olufemi Kehinde Taiwo Bukola Abiodun Damilola "
        "Tunde Segun Gbenga Kayode Aminu Abubakar Musa Sani Bello Yakubu Zainab Hadiza Halima "
        "Bilkisu Garba Danjuma Nasiru Shehu Hauwa Jumoke Omotola Efosa Osagie Chinonso Ogechi "
        "Ifeoma Nneka Emeka",
        "Okafor Okonkwo Eze Nwosu Obi Okeke Nwachukwu Okoro Chukwu Onyeka Ugwu Nnaji Igwe Anyanwu "
        "Uzor Adeyemi Adebayo Ogunleye Oladipo Balogun Adeleke Afolabi Ogunbanjo Olawale Adewumi "
        "Akinola Ojo Oyelaran Bakare Odusanya Fashola Olaniyan Adesina Ayodeji Abdullahi Danladi "
        "Aliyu Shehu Lawal Suleiman Tanko Gambo Dikko Bature Okoye Onuoha Emenike Ekwueme Nwankwo "
        "Agu Obiora Ezeani Okwuosa Osuji Amadi Iwu Ibe Nwafor Orji Uche",
    ),
    "arabic": (
        "Ahmed Mohammed Ali Omar Youssef Khalid Hassan Ibrahim Mustafa Tariq Karim Samir Nabil "
        "Walid Rami Fadi Ziad Bilal Hamza Yasser Adel Amr Hisham Faisal Majid Nasser Sami Tamer "
        "Hani Bassam Imad Jamal Marwan Mahmoud Salim Anas Saeed Firas Ayman Fatima Aisha Mariam "
        "Layla Nour Huda Rania Dina Salma Amira Yasmin Lina Hala Mona Reem Samira Nadia Leila Rana "
        "Zeinab Ghada",
        "Al-Farsi Haddad Khoury Nasser Saleh Mansour Hamdan Aziz Khalil Qasim Sabbagh Bakri "
        "Darwish Najjar Masri Shami Halabi Tamimi Zoubi Abbas Jaber Hijazi Issa Kanaan Salem "
        "Yassin Othman Awad Fakhoury Ghanem Hakim Hamad Karam Nassar Qureshi Rashed Sayegh "
        "Shaheen Taha Zaki Amin Barakat Daher Farah Habib Jarrah Khatib Maalouf Nader Obeid Rizk "
        "Saad Tawfik Wahbi Zidan Al-Amri Al-Harbi Al-Shehri Al-Qahtani Al-Mutairi Al-Dosari "
        "Al-Otaibi",
    ),
    "russian": (
        "Aleksandr Dmitry Sergey Andrey Alexey Maxim Ivan Mikhail Nikolai Vladimir Pavel Artem "
        "Roman Yuri Oleg Igor Konstantin Viktor Denis Evgeny Anton Ilya Kirill Stanislav Vadim "
        "Boris Gleb Timur Fyodor Arkady Anna Elena Olga Tatiana Natalia Irina Svetlana Maria "
        "Ekaterina Yulia Anastasia Marina Daria Ksenia Polina Alina Vera Lyudmila Galina Nadezhda "
        "Oksana Valentina Larisa Sofia Kristina Veronika Zoya Alla Inna Lidia",
        "Ivanov Smirnov Kuznetsov Popov Vasiliev Petrov Sokolov Mikhailov Novikov Fedorov Morozov "
        "Volkov Alekseev Lebedev Semenov Egorov Pavlov Kozlov Stepanov Nikolaev Orlov Andreev "
        "Makarov Nikitin Zakharov Zaitsev Soloviev Borisov Yakovlev Grigoriev Romanov Vorobiev "
        "Sergeev Kuzmin Frolov Alexandrov Dmitriev Korolev Gusev Kiselev Ilyin Maksimov Polyakov "
        "Sorokin Vinogradov Kovalev Belov Medvedev Antonov Tarasov Zhukov Baranov Filippov "
        "Komarov Davydov Belyaev Gerasimov Bogdanov Osipov Sidorov",
    ),
    "chinese": (
        "Wei Fang Na Min Jing Qiang Lei Jun Yong Yan Jie Tao Ming Chao Hui Ping Gang Hong Xin Bo "
        "Hao Lin Xiaoming Jianguo Zhiwei Haiyan Xiaoling Guoqiang Dongmei Wenjun Yuxuan Zihan "
        "Haoran Yichen Ruoxi Jiahui Shuang Ying Kai Peng Rui Bin Lan Mei Qing Xue Zhen Feng "
        "Liang Hua Dan Juan Xia Yun Ning Tingting Xiuying Guiying Yuming",
        "Wang Li Zhang Liu Chen Yang Huang Zhao Wu Zhou Xu Sun Ma Zhu Hu Guo He Gao Lin Luo Zheng "
        "Liang Xie Song Tang Han Feng Deng Cao Peng Zeng Xiao Tian Dong Pan Yuan Cai Jiang Yu Du "
        "Ye Cheng Wei Su Lu Ding Ren Shen Yao Jin Fu Zhong Cui Tan Lai Qian Qin Dai Xia Kong",
    ),
    "indian": (
        "Rahul Amit Rajesh Suresh Ramesh Vijay Sanjay Anil Sunil Arjun Rohan Vikram Karan Arun "
        "Deepak Manoj Ashok Pradeep Naveen Sandeep Rakesh Mahesh Ganesh Nikhil Aditya Siddharth "
        "Harish Girish Prakash Ravi Priya Anjali Pooja Neha Kavita Sunita Anita Deepa Lakshmi "
        "Meena Divya Shreya Aishwarya Swati Rekha Geeta Sneha Ritu Nisha Shalini Padma Radha "
        "Sarita Usha Asha Jyoti Kiran Preeti Rani Savita",
        "Sharma Verma Gupta Singh Kumar Patel Shah Mehta Joshi Reddy Rao Nair Iyer Menon Pillai "
        "Chatterjee Banerjee Mukherjee Das Bose Ghosh Sen Agarwal Jain Bansal Malhotra Kapoor "
        "Khanna Chopra Bhatia Sethi Arora Saxena Srivastava Mishra Pandey Tiwari Dubey Yadav "
        "Chauhan Thakur Rathore Desai Kulkarni Deshpande Patil Naidu Krishnan Subramanian "
        "Venkatesh Raman Bhatt Trivedi Chaudhary Gill Sandhu Dhillon Grewal Ahuja",
    ),
}
POOLS = {k: (v[0].split(), v[1].split()) for k, v in POOLS.items()}
FEMALE = set(
    "Mary Patricia Jennifer Linda Elizabeth Barbara Susan Jessica Sarah Karen Lisa Nancy Betty "
    "Margaret Sandra Ashley Kimberly Emily Donna Michelle Carol Amanda Dorothy Melissa Deborah "
    "María Carmen Ana Lucía Sofía Isabel Laura Marta Elena Paula Rosa Gabriela Valentina Camila "
    "Daniela Fernanda Adriana Claudia Mónica Verónica Silvia Beatriz Teresa Pilar Natalia "
    "Alejandra Andrea Carolina Mariana Fatima Aisha Mariam Layla Nour Huda Rania Dina Salma Amira "
    "Yasmin Lina Hala Mona Reem Samira Nadia Leila Rana Zeinab Ghada Anna Olga Tatiana Irina "
    "Svetlana Maria Ekaterina Yulia Anastasia Marina Daria Ksenia Polina Alina Vera Lyudmila "
    "Galina Nadezhda Oksana Larisa Sofia Kristina Veronika Zoya Alla Inna Lidia".split()
)
RUS_PATRONYMICS = [
    ("Aleksandrovich", "Aleksandrovna"), ("Sergeyevich", "Sergeyevna"), ("Ivanovich", "Ivanovna"),
    ("Vladimirovich", "Vladimirovna"), ("Nikolayevich", "Nikolayevna"), ("Petrovich", "Petrovna"),
    ("Mikhailovich", "Mikhailovna"), ("Viktorovich", "Viktorovna"), ("Yuryevich", "Yuryevna"),
    ("Andreyevich", "Andreyevna"), ("Olegovich", "Olegovna"), ("Igorevich", "Igorevna"),
    ("Borisovich", "Borisovna"), ("Pavlovich", "Pavlovna"), ("Anatolyevich", "Anatolyevna"),
    ("Vasilyevich", "Vasilyevna"), ("Gennadyevich", "Gennadyevna"), ("Valeryevich", "Valeryevna"),
]
US_EXTRA_FIRST = ("Mike Bob Jim Tom Joe Dave Steve Chris Matt Tony Kate Megan Lauren Rachel "
                  "Heather Amy Brittany Tyler Austin Kyle Dylan Caleb Logan Hunter Connor Chase "
                  "Trevor Derek Shawn Travis Cody Dustin Brent Wade").split()
US_EXTRA_LAST = ("Sullivan Hoffman Schmidt Weber Foster Simmons Bryant Griffin Hayes Myers Ford "
                 "Hamilton Graham Wallace West Cole Jordan Reynolds Fisher Ellis Harrison Gibson "
                 "McCarthy Kennedy Wells Patterson Hunt Black Holmes Palmer Wagner Olson Stone "
                 "Dunn Porter Hudson Spencer Gardner Payne Pierce Berry Matthews Arnold Willis "
                 "Ray Watkins Olsen Carroll Duncan Snyder Hart Cunningham Bradley Lane Andrews "
                 "Ruiz Harper Fox Riley Armstrong Carpenter Weaver Greene Lawrence Elliott Chavez "
                 "Sims Austin Peters Kelley Franklin Lawson Fields Gutierrez Ryan Schultz Carlson").split()

GENERIC_WORDS = set(
    "trading trade traders bank banking group company co international intl industries industry "
    "industrial holding holdings investment investments invest general services service shipping "
    "ship oil gas petroleum petrochemical energy import export imports exports construction "
    "development engineering technology technologies tech commercial enterprise enterprises "
    "national global corporation corp foundation society association organization organisation "
    "islamic of the and de la del y for airlines airways air exchange money finance financial "
    "insurance logistics consulting management capital partners solutions systems electronics "
    "machinery manufacturing factory plant institute research center centre scientific "
    "production agency charity relief fund trust union brothers sons house marine maritime "
    "transport transportation cargo freight mining metals steel chemical chemicals equipment "
    "supply supplies products pharmaceutical medical agro agricultural food foods textile "
    "textiles electric power resources real estate properties property development media "
    "communications telecom network security defense defence aviation aerospace tours travel "
    "hotel hotels commerce commodities business consultancy project projects limited llc ltd "
    "inc jsc pjsc sa plc gmbh fze llp front movement army brigade brigades battalion party "
    "council committee ministry office department directorate forces force unit corps guard "
    "navy university college school hospital studio design software data line lines fishing "
    "sea ocean world universal united new first central eastern western northern southern "
    "east west north south general middle asia africa europe american russian iranian chinese "
    "iraqi syrian lebanese in on at to an a".split()
)

COMPANY_WORDS = ("Sunrise Bluewater Evergreen Northstar Harborview Pinnacle Summit Meridian Oakridge "
                 "Silverline Redwood Lakeshore Highland Greenfield Kingsway Brightpath Riverside "
                 "Westbrook Eastgate Clearwater Stonebridge Maplewood Cedarline Orchid Lotus "
                 "Horizon Crestview Fairway Goldleaf Ironwood Bayside Hilltop Sandstone Coral "
                 "Amberley Kestrel Heron Willow Juniper Magnolia Rosewood Sterling Beacon "
                 "Cornerstone Keystone Lighthouse Trident Zephyr Aurora Solaris Nimbus Vertex "
                 "Apex Quantum Lagoon Savanna Baobab Kilimanjaro Niger Delta Ikeja Lekki Abuja "
                 "Calabar Benin Kano Enugu Owerri").split()
PLACE_WORDS = ("China Chile Cyprus Canada Cuba Chad Congo Korea Kenya Kuwait Lebanon Libya Liberia "
               "Latvia Malta Mali Malawi Mexico Monaco Morocco Nepal Niger Nigeria Norway Oman Peru "
               "Poland Panama Qatar Romania Rwanda Russia Serbia Spain Sudan Sweden Syria Taiwan "
               "Tunisia Turkey Uganda Ukraine Uruguay Yemen Zambia Austria Algeria Angola Armenia "
               "Belarus Belgium Benin Bolivia Brazil Bulgaria Burundi Iran Iraq Israel Italy "
               "Jordan Japan Ghana Gabon Gambia Georgia Greece Guinea Guyana Haiti India Moscow "
               "Minsk Milan Madrid Manila Mumbai Dubai Doha Damascus Delhi Dakar Lagos Lima Lisbon "
               "London Luanda Kiev Kabul Karachi Cairo Caracas Tehran Tbilisi Tunis Tripoli "
               "Baghdad Beirut Berlin Bern Sanaa Sofia Seoul Riga Rome Paris Prague Oslo "
               "Ankara Aden Amman Accra Astana Baku Basra Mosul Herat Kandahar Aleppo Homs "
               "Mellon Merit Merlin Meridian Mercury Melody Harmony Heritage Herald Capital "
               "Capitol Crescent Crystal Central Century Citadel Civic Classic Coastal Comet "
               "Pacific Atlantic Arctic Alpine Atlas Apollo Orion Omega Olympus Phoenix Pioneer "
               "Premier Prime Progress Prosper Rainbow Royal Saturn Sierra Silver Sky Star "
               "Sun Titan Tower Trinity Venus Victory Vista Zenith Golden Green Grand Great").split()

# --------------------------------------------------------------------------------------------
# Text helpers
# --------------------------------------------------------------------------------------------


ACRONYM_UPPER = {"Llc", "Jsc", "Pjsc", "Ojsc", "Cjsc", "Ooo", "Oao", "Zao", "Pao", "Fze", "Fzco", "Plc"}


def tc_token(t: str) -> str:
    if not (t.isupper() or t.islower()):
        return t

    def cap(m):
        # after an apostrophe: "O'Brien", "'Abd", "Al-'Anzi" keep a capital; "Ni'ma", "Sa'ad" not
        w_ = m.group(0)
        start = m.start()
        if start >= 1 and t[start - 1] in "'’`":
            before = t[start - 2] if start >= 2 else ""
            if before.isalpha():
                single = start == 2 or not t[start - 3].isalpha()
                return w_.capitalize() if single else w_.lower()
        return w_.capitalize()

    out = re.sub(r"[^\W\d_]+", cap, t)
    return out.upper() if out in ACRONYM_UPPER else out


def title(s: str) -> str:
    return " ".join(tc_token(t) for t in s.split())


def typed(s: str, rng: random.Random, upper_share=0.15, lower_share=0.08) -> str:
    """How a user would key the name: mostly Title Case, sometimes all caps or lower case."""
    x = rng.random()
    if x < upper_share:
        return s.upper()
    if x < upper_share + lower_share:
        return s.lower()
    return title(s)


def strip_accents(s: str) -> str:
    return unicodedata.normalize("NFC", fold(s))


def is_initial(u: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z]\.?", u))


# --------------------------------------------------------------------------------------------
# Positive generators: each returns (variant, note) or None
# --------------------------------------------------------------------------------------------


TITLE_LIKE = set("seyed seyyed sayed sayyed sayyid syed sayyed haji hajji alhaji mullah mulla "
                 "maulvi mawlawi moulvi qari sheikh shaykh shaikh hojatoleslam mir".split())


def individual_units(e: Ent, strip_title: bool = False):
    if e.etype != "individual" or e.given is None or not e.given or not e.surname:
        return None
    g = [u for u in e.given if not re.fullmatch(r"\(.*\)", u)]
    s = list(e.surname)
    if strip_title:
        while len(g) > 1 and g[0].lower().strip(".") in TITLE_LIKE:
            g = g[1:]
        if g and g[0].lower().strip(".") in TITLE_LIKE:
            return None
    if not g or not s:
        return None
    return g, s


def gen_exact(e: Ent, rng, w: World):
    name = e.primary
    if re.search(r"[;/]", name) or not is_latin(name):
        return None
    return name, "primary name as published"


def gen_alias(e: Ent, rng, w: World):
    prim = tokset(e.primary)
    cands = []
    for a in e.aliases:
        ts = tokset(a)
        ct = [t for t in content_tokens(a) if t not in GENERIC_WORDS]
        if not ts or ts == prim or not is_latin(a) or re.search(r"[;/]", a):
            continue
        if len(ts) < 2 and (not ct or len(ct[0]) < 6):
            continue
        if not ct:
            continue
        cands.append(a)
    if not cands:
        return None
    a = rng.choice(cands)
    return a, "alias as published"


def gen_reorder(e: Ent, rng, w: World):
    iu = individual_units(e)
    if not iu:
        return None
    g, s = iu
    if e.list in ("ofac-sdn",) or (e.list == "zala"):
        v = " ".join(g + s)  # LAST, First -> First Last
        note = "'LAST, First' written in natural order"
    elif e.list == "uk":
        v = " ".join(g + s)
        note = "UK surname-first written in natural order"
    else:
        if rng.random() < 0.5:
            v = " ".join(s) + ", " + " ".join(g)
            note = "natural order written 'LAST, First'"
        else:
            v = " ".join(s + g)
            note = "natural order written surname first"
    if v.replace(",", "").split() == e.primary.replace(",", "").split():
        return None
    return typed(v, rng), note


KEYS = {
    "q": "wa", "w": "qeas", "e": "wrsd", "r": "etdf", "t": "ryfg", "y": "tugh", "u": "yihj",
    "i": "uojk", "o": "ipkl", "p": "ol", "a": "qwsz", "s": "awedxz", "d": "serfcx", "f": "drtgvc",
    "g": "ftyhbv", "h": "gyujnb", "j": "huikmn", "k": "jiolm", "l": "kop", "z": "asx", "x": "zsdc",
    "c": "xdfv", "v": "cfgb", "b": "vghn", "n": "bhjm", "m": "njk",
}


def one_edit(word: str, rng: random.Random) -> tuple[str, str] | None:
    """One realistic keying error in a lower-case ASCII word (never at position 0)."""
    n = len(word)
    ops = ["sub", "del", "swap", "dup"]
    rng.shuffle(ops)
    for op in ops:
        if op == "sub":
            i = rng.randrange(1, n)
            c = word[i]
            if c not in KEYS:
                continue
            r = rng.choice(KEYS[c])
            return word[:i] + r + word[i + 1:], f"sub {c}->{r}"
        if op == "del":
            i = rng.randrange(1, n)
            return word[:i] + word[i + 1:], f"del {word[i]}"
        if op == "swap":
            i = rng.randrange(1, n - 1)
            if word[i] == word[i + 1]:
                continue
            return word[:i] + word[i + 1] + word[i] + word[i + 2:], f"swap {word[i]}{word[i + 1]}"
        if op == "dup":
            i = rng.randrange(1, n)
            if word[i] == word[i - 1] or (i + 1 < n and word[i + 1] == word[i]):
                continue
            return word[:i] + word[i] + word[i:], f"dup {word[i]}"
    return None


def base_form(e: Ent) -> str:
    """Natural-order form of an individual's name, cleaned primary for others."""
    if e.etype == "individual":
        iu = individual_units(e)
        if iu:
            return " ".join(iu[0] + iu[1])
    return clean_entity_name(e.primary)


def gen_typo(e: Ent, rng, w: World):
    base = strip_accents(base_form(e))
    toks = base.split()
    if len(content_tokens(base)) < 2 and e.etype == "individual":
        return None
    # candidate sub-words: alphabetic runs of length >= 5 that are not generic words
    cands = []
    for ti, t in enumerate(toks):
        for m in re.finditer(r"[A-Za-z]+", t):
            seg = m.group(0)
            if len(seg) >= 5 and seg.lower() not in GENERIC_WORDS and seg.lower() not in LEGAL_SINGLE:
                cands.append((ti, m.start(), seg))
    if not cands:
        return None
    two = rng.random() < 0.3
    plan = []
    if two:
        long_ = [c for c in cands if len(c[2]) >= 9]
        distinct_tokens = {c[0] for c in cands}
        if len(distinct_tokens) >= 2 and rng.random() < 0.6:
            a, b = rng.sample(sorted(distinct_tokens), 2)
            plan = [rng.choice([c for c in cands if c[0] == a]), rng.choice([c for c in cands if c[0] == b])]
        elif long_:
            c = rng.choice(long_)
            plan = [c, c]
        else:
            plan = [rng.choice(cands)]
    else:
        plan = [rng.choice(cands)]
    notes = []
    toks = list(toks)
    applied = {}
    for ti, start, seg in plan:
        key = (ti, start)
        cur = applied.get(key, seg.lower())
        res = one_edit(cur, rng)
        if not res:
            return None
        new, note = res
        applied[key] = new
        notes.append(f"{note} in '{seg.lower()}'")
    for (ti, start), new in applied.items():
        seg = re.match(r"[A-Za-z]+", toks[ti][start:]).group(0)
        # a "typo" that is a real name or word (on any list, or a known spelling variant) is
        # a different name, not a typo
        if new in w.vocab or canon(new) != new or new == seg.lower():
            return None
        if seg.isupper():
            new = new.upper()
        elif seg[:1].isupper():
            new = new.capitalize()
        toks[ti] = toks[ti][:start] + new + toks[ti][start + len(seg):]
    v = " ".join(toks)
    return typed(v, rng, 0.1, 0.1), "; ".join(notes)


def gen_missing_middle(e: Ent, rng, w: World):
    iu = individual_units(e, strip_title=True)
    if not iu:
        return None
    g, s = iu
    if len(g) < 2:
        return None
    if any(is_initial(u) for u in g[:1]) or e.culture in ("burmese", "korean"):
        return None
    v = " ".join([g[0]] + s)
    if w.ambiguous(v, e.kind, w.linked[e.id]):
        return None
    return typed(v, rng), f"dropped middle name(s) '{' '.join(g[1:])}'"


def gen_initials(e: Ent, rng, w: World):
    iu = individual_units(e, strip_title=True)
    if not iu:
        return None
    g, s = iu
    first = g[0]
    letters = re.sub(r"[^A-Za-z]", "", strip_accents(first))
    if (" " in first or "-" in first or not letters or len(letters) < 3
            or e.culture in ("burmese", "korean")):
        return None
    ini = letters[0].upper() + "."
    rest = g[1:]
    if e.culture == "slavic" and rest and re.search(r"(vich|vna|ich|ichna)$", rest[0].lower()):
        mid = [re.sub(r"[^A-Za-z]", "", strip_accents(rest[0]))[0].upper() + "."]
        v = " ".join([ini] + mid + [title(x) for x in s])
        note = "first name and patronymic reduced to initials"
    elif rest and rng.random() < 0.5:
        v = " ".join([ini] + [title(x) for x in rest + s])
        note = "first name reduced to initial, middle names kept"
    else:
        if len(content_tokens(" ".join(s))) < 1:
            return None
        v = " ".join([ini] + [title(x) for x in s])
        note = "first name reduced to initial, middle names dropped"
    if len([t for t in content_tokens(v) if len(t) > 1]) < 1:
        return None
    if w.ambiguous(v, e.kind, w.linked[e.id]):
        return None
    return v, note


JOIN_PREFIXES = ("abdul", "abdel", "abdal", "abd", "abu", "al", "el", "bin", "ben", "ibn", "ul")
SPLIT_SUFFIXES = ("ullah", "uddin", "eddine", "addin", "allah")
COMPOUND_PARTS = ("holding", "bank", "trans", "neft", "gaz", "prom", "stroy", "tech", "export",
                  "import", "invest", "service", "energo", "mash", "flot", "avia", "techno")


def gen_join_split(e: Ent, rng, w: World):
    base = base_form(e) if e.etype == "individual" else clean_entity_name(e.primary)
    toks = base.split()
    ops = []
    for i, t in enumerate(toks):
        low = t.lower()
        if "-" in t.strip("-") and len(t) >= 5:
            parts = [p for p in t.split("-") if p]
            if len(parts) >= 2:
                ops.append(("hyphen-space", i, " ".join(parts)))
                joined = parts[0] + "".join(p if p.isupper() else p.lower() for p in parts[1:])
                if len(parts) == 2 and len(parts[0]) <= 3 or parts[0].lower() in JOIN_PREFIXES:
                    ops.append(("hyphen-join", i, joined))
        if low in JOIN_PREFIXES and i + 1 < len(toks) and re.fullmatch(r"[A-Za-z]+", toks[i + 1]):
            if toks[i + 1].lower() not in GENERIC_WORDS:
                ops.append(("join", i, t + toks[i + 1].lower() if t[-1].islower() else t + toks[i + 1]))
        if (re.fullmatch(r"[A-Za-z]+", t) and len(t) >= 8 and e.culture == "arabic"
                and not re.search(r"(vich|vna|ovych|ivna)$", low)):
            for pre in ("abdul", "abdel", "abu", "al"):
                if low.startswith(pre) and len(low) - len(pre) >= 4 and low[len(pre)] not in "aeiou" * (pre == "al"):
                    ops.append(("split", i, t[:len(pre)] + " " + t[len(pre):]))
                    break
            for suf in SPLIT_SUFFIXES:
                if low.endswith(suf) and len(low) - len(suf) >= 4:
                    ops.append(("split", i, t[:-len(suf)] + " " + t[-len(suf):]))
                    break
        if re.fullmatch(r"[A-Za-z]+", t) and len(t) >= 8:
            if e.etype != "individual":
                for part in COMPOUND_PARTS:
                    j = low.find(part, 3)
                    if j >= 4 and len(low) - j >= 4:
                        ops.append(("split", i, t[:j] + " " + t[j:]))
                        break
                    if low.endswith(part) and len(low) - len(part) >= 4:
                        ops.append(("split", i, t[:-len(part)] + " " + t[-len(part):]))
                        break
    if e.culture == "korean" and e.etype == "individual":
        iu = individual_units(e)
        if iu:
            g, s = iu
            gt = " ".join(g).replace("-", " ").split()
            if len(gt) == 2 and "-" not in " ".join(g):
                sep = rng.choice(["-", ""])
                v = title(" ".join(s)) + " " + gt[0].capitalize() + sep + gt[1].lower()
                return v, f"Korean given name syllables joined with '{sep or 'nothing'}'"
            if len(gt) == 2 and "-" in " ".join(g):
                v = title(" ".join(s)) + " " + gt[0].capitalize() + gt[1].lower()
                return v, "Korean hyphenated given name written as one word"
    if not ops:
        return None
    strong = [o for o in ops if o[0] != "hyphen-space"]
    if strong and (rng.random() < 0.8 or len(strong) == len(ops)):
        op, i, rep = rng.choice(strong)
    else:
        op, i, rep = rng.choice([o for o in ops if o[0] == "hyphen-space"])
    new = toks[:i] + [rep] + toks[i + 1:]
    if op == "join":
        new = toks[:i] + [rep] + toks[i + 2:]
    v = " ".join(new)
    if tokset(v) == tokset(base) and op not in ("hyphen-space",):
        pass
    if v == base:
        return None
    return typed(v, rng, 0.2, 0.05), f"{op}: '{' '.join(toks[i:i + 2]) if op.startswith('join') else toks[i]}' -> '{rep}'"


# Legal-form rewrites (regex on the upper-cased name, replacement choices)
FORM_RULES = [
    (r"\bS\.? ?DE R\.? ?L\.? DE C\.? ?V\.?", ["S de RL de CV", ""]),
    (r"\bS\.? ?A\.? DE C\.? ?V\.?", ["SA de CV", "S.A.", "Sociedad Anonima de Capital Variable", ""]),
    (r"\bS\.A\.C\.?(?![\w.])", ["SAC", ""]),
    (r"\bCO\.,? LTD\.?", ["Company Limited", "Co Ltd", "Co., Ltd", ""]),
    (r"\bCOMPANY LIMITED\b", ["Co., Ltd.", "Co Ltd", "Company Ltd", ""]),
    (r"\bLIMITED LIABILITY COMPANY\b", ["LLC", "L.L.C.", "OOO", ""]),
    (r"\bLIMITED\b", ["Ltd", "Ltd.", ""]),
    (r"\bLTD\.?", ["Limited", ""]),
    (r"\bL\.?L\.?C\.?", ["Limited Liability Company", "OOO", ""]),
    (r"\bOOO\b", ["LLC", "Limited Liability Company", ""]),
    (r"\bPUBLIC JOINT STOCK COMPANY\b", ["PJSC", "PAO", ""]),
    (r"\bPRIVATE JOINT STOCK COMPANY\b", ["Private JSC", "PrJSC", ""]),
    (r"\bOPEN JOINT STOCK COMPANY\b", ["OJSC", "OAO", "JSC", ""]),
    (r"\bCLOSED JOINT STOCK COMPANY\b", ["CJSC", "ZAO", "JSC", ""]),
    (r"\bJOINT[- ]STOCK COMPANY\b", ["JSC", "AO", ""]),
    (r"\bPJSC\b", ["Public Joint Stock Company", "PAO", ""]),
    (r"\bOJSC\b", ["Open Joint Stock Company", "OAO", ""]),
    (r"\bCJSC\b", ["Closed Joint Stock Company", "ZAO", ""]),
    (r"\bJSC\b", ["Joint Stock Company", "AO", ""]),
    (r"\bAO\b", ["JSC", "Joint Stock Company", ""]),
    (r"\bGMBH\b", ["", "LLC"]),
    (r"\bS\. ?A\.?(?![\w.])|\bSA\b(?![\w.])", ["SA", "S A", "Sociedad Anonima", ""]),
    (r"\bINC\.?(?= |$)", ["Incorporated", ""]),
    (r"\bINCORPORATED\b", ["Inc.", ""]),
    (r"\bCORP\.?(?= |$)", ["Corporation", ""]),
    (r"\bCORPORATION\b", ["Corp.", "Corp", ""]),
    (r"\bPLC\b", ["Public Limited Company", ""]),
    (r"\bFZE\b", ["", "FZCO"]),
    (r"\bPVT\.? LTD\.?", ["Private Limited", "Pvt Limited", ""]),
    (r"\bSDN\.? BHD\.?", ["", "Sendirian Berhad"]),
    (r"\bCOMPANY\b", ["Co.", "Co"]),
]
FORM_ADD = ["Ltd", "LLC", "Limited", "Co.", "JSC"]
FOREIGN_FORMS = set(
    "eood ood ead ad sia uab kft zrt bt ltda sl slu sro as oy ab ag bv nv spa srl sas sarl pte "
    "bhd jlt fzco fzc fze dmcc tov pao oao zao ooo dooel doo dd gie cv rl sapi sc scs snc kg ohg "
    "ug ek pt tbk cia cie sirketi anonim limitada".split())
BUSINESS_WORDS = set(
    "trading trade traders shipping investment investments holding holdings industries "
    "logistics petroleum oil gas energy import export electronics engineering construction "
    "marine maritime tours travel exchange commodities technology technologies tech supply "
    "supplies equipment machinery chemical chemicals metals steel mining textile textiles "
    "pharmaceutical foods consulting services transport freight cargo properties "
    "development enterprises".split())
NON_BUSINESS_WORDS = set(
    "state federal ministry directorate committee army front movement brigade brigades battalion "
    "party council office department forces force unit corps guard navy university college "
    "school hospital institute academy government national municipal unitary republican "
    "administration authority agency bureau commission islamic jihad mujahideen jamaat "
    "organization organisation network group association society foundation charity relief "
    "fund trust union".split())


def gen_company_form(e: Ent, rng, w: World):
    if e.etype != "entity":
        return None
    base = clean_entity_name(e.primary)
    up = strip_accents(base).upper()
    if len([t for t in content_tokens(base) if t not in GENERIC_WORDS]) < 1:
        return None
    for pat, reps in FORM_RULES:
        m = re.search(pat, up)
        if not m:
            continue
        # the first (most specific) rule that matches decides; try its rewrites in random order
        for rep in rng.sample(reps, len(reps)):
            new = (up[:m.start()] + (" " + rep + " " if rep else " ") + up[m.end():])
            new = re.sub(r"\s+", " ", new).strip(" ,").replace(" ,", ",")
            new = re.sub(r",\s*,", ",", new).strip(" ,")
            if not new or new == up:
                continue
            dist_ = [t for t in content_tokens(new) if t not in GENERIC_WORDS]
            if not dist_ or sum(len(t) for t in dist_) < 5:
                continue
            shown = typed(new, rng, 0.1, 0.25)
            # legal-form acronyms stay upper case in Title Case output
            shown = re.sub(r"\b(Llc|Jsc|Pjsc|Ojsc|Cjsc|Ooo|Ao|Pao|Oao|Zao|Fze|Fzco|Plc|Sa|Sac|Gmbh|Cv|Rl)\b",
                           lambda mm: mm.group(0).upper(), shown)
            shown = re.sub(r"\bDe (?=(?:CV|RL)\b)", "de ", shown)
            return shown, f"legal form '{m.group(0).strip()}' -> '{rep or '(dropped)'}'"
        return None
    # no legal form: add one (a payment reference often carries one the list omits), but only
    # to names that read like a business, never to armed groups, ministries or state bodies
    toks_ = set(content_tokens(base))
    if toks_ & FOREIGN_FORMS:
        return None
    if (rng.random() < 0.35 and len(toks_) >= 2 and toks_ & BUSINESS_WORDS
            and not toks_ & NON_BUSINESS_WORDS and not e.id.startswith("un:QD")
            and not any(p in e.program for p in ("SDGT", "FTO", "ISIL", "Al-Qaida", "Counter-Terrorism"))):
        add = rng.choice(FORM_ADD)
        return typed(base + " " + add, rng, 0.1, 0.2), f"legal form '{add}' added"
    return None


# Transliteration rules. (name, culture, regex on a lower-case token, replacement)
TRANSLIT_RULES = [
    ("ou->u", "arabic", r"ou", "u"),
    ("u->ou", "arabic", r"(?<=[bcdfghjklmnpqrstvwxz])u(?=[bcdfghjklmnpqrstvwxz])", "ou"),
    ("ee->i", "arabic", r"ee", "i"),
    ("i->ee", "arabic", r"(?<=[bcdfghjklmnpqrstvwxz])i(?=[bdfhjklmnrstz]$)", "ee"),
    ("q->k", "arabic", r"q", "k"),
    ("j->dj", "arabic", r"^j(?=[aeiou])", "dj"),
    ("dj->j", "arabic", r"dj", "j"),
    ("sh->ch", "arabic", r"sh", "ch"),
    ("oo->u", "arabic", r"oo", "u"),
    ("ay->ai", "arabic", r"ay(?=[bcdfghjklmnpqrstvwxz]|$)", "ai"),
    ("ai->ay", "arabic", r"ai(?=[bcdfghjklmnpqrstvwxz]|$)", "ay"),
    ("al-->el-", "arabic", r"^al-", "el-"),
    ("ah$->a", "arabic", r"(?<=[a-z]{3})ah$", "a"),
    ("a$->ah", "arabic", r"(?<=[bcdfgjklmnpqrstvz][a-z]{2}[bcdfgjklmnpqrstvz])a$", "ah"),
    ("double->single", "arabic", r"([bdlmnrst])\1", r"\1"),
    ("i$->y", "arabic", r"(?<=[bcdfghjklmnpqrstvwxz])i$", "y"),
    ("dh->z", "arabic", r"(?<=[aeiou])dh(?=[aeiou])", "z"),
    ("w->ou", "arabic", r"^w(?=[aeiou])", "ou"),
    ("abdul->abdel", "arabic", r"^abd(ul|al)(?=[a-z]{3})", "abdel"),
    ("abdel->abdul", "arabic", r"^abd(el|al)(?=[a-z]{3})", "abdul"),
    ("ph->f", "any", r"ph", "f"),
    ("ov->off", "slavic", r"(?<=[a-z]{3})ov$", "off"),
    ("ev->eff", "slavic", r"(?<=[a-z]{3}[bcdfghjklmnpqrstvwxz])ev$", "eff"),
    ("Vev->Vyev", "slavic", r"(?<=[aeiu])ev(a?)$", r"yev\1"),
    ("yev->ev", "slavic", r"(?<=[aeiu])yev(a?)$", r"ev\1"),
    ("iy$->y", "slavic", r"iy$", "y"),
    ("y$->iy", "slavic", r"(?<=[bcdfghklmnprstvz])y$", "iy"),
    ("ii$->y", "slavic", r"ii$", "y"),
    ("skiy->sky", "slavic", r"skiy$", "sky"),
    ("sky->ski", "slavic", r"sky$", "ski"),
    ("ks->x", "slavic", r"ks", "x"),
    ("x->ks", "any", r"x", "ks"),
    ("kh->h", "slavic", r"kh", "h"),
    ("ei$->ey", "slavic", r"ei$", "ey"),
    ("ey$->ei", "slavic", r"ey$", "ei"),
    ("ya->ia", "slavic", r"(?<=[bcdfghklmnprstvz])ya", "ia"),
    ("ia->ya", "slavic", r"(?<=[bcdfghklmnprstvz])ia", "ya"),
    ("yu->iu", "slavic", r"(?<=[bcdfghklmnprstvz])yu", "iu"),
    ("ch->tch", "slavic", r"(?<!t)ch", "tch"),
    ("zh->j", "slavic", r"zh", "j"),
    ("chev->chov", "slavic", r"chev$", "chov"),
    ("ov->ow", "slavic", r"(?<=[a-z]{3})ov$", "ow"),
    ("^v->w", "slavic", r"^v", "w"),
    ("^y->j", "slavic", r"^y(?=[aeiou])", "j"),
    ("shch->sch", "slavic", r"shch", "sch"),
    ("^e->ye", "slavic", r"^e(?=[bcdfghklmnprstvz])", "ye"),
    ("^ye->e", "slavic", r"^ye", "e"),
    ("yo->e", "slavic", r"yo", "e"),
    ("iev->yev", "slavic", r"iev(a?)$", r"yev\1"),
]


def translit_options(tok: str, culture: str) -> list[tuple[str, str, bool]]:
    """(new token, rule name, whole-name swap?) alternatives for one lower-case token."""
    out = []
    for g in VARIANT_GROUPS:
        m = g.split()
        if tok in m:
            for alt in m:
                if alt != tok:
                    out.append((alt, f"{tok}->{alt}", True))
            break
    if tok in PARTICLES:  # "bin" -> "been" is not a romanisation; only the swaps above apply
        return out
    for name, cult, pat, rep in TRANSLIT_RULES:
        if cult not in ("any", culture):
            continue
        if re.search(pat, tok):
            new = re.sub(pat, rep, tok, count=1)
            if new != tok and len(new) >= 2:
                out.append((new, name, False))
    return out


def gen_translit(e: Ent, rng, w: World):
    """Apply one or two romanisation rules; a pattern rule is applied to every token it fits
    (a transliteration system is used consistently), a whole-name swap to one token."""
    if e.culture not in ("arabic", "slavic"):
        return None
    base = strip_accents(base_form(e))
    toks = base.split()
    rules: dict[str, list[tuple[int, str, str]]] = collections.defaultdict(list)
    for i, t in enumerate(toks):
        low = t.lower()
        if low in GENERIC_WORDS or low in LEGAL_SINGLE:
            continue
        # in an organisation's name only words that are person names on the lists, or Russian
        # adjectival endings, are romanised words; "PROCESSING", "NUCLEAR" are English
        if e.etype != "individual":
            bare = re.sub(r"^(al|el)-", "", low)
            if bare not in w.person_vocab and not re.search(r"(skiy|skii|sky|skaya|skoye|nyi|nyy|iy)$", bare):
                continue
        if re.fullmatch(r"[a-z]+", low):
            art, rest = "", low
        elif re.fullmatch(r"(al|el)-[a-z]+", low):
            art, rest = low.split("-")
            art += "-"
            if art == "al-":
                rules["al-->el-"].append((i, low, "el-" + rest))
        else:
            continue
        for new, rule, swap in translit_options(rest, e.culture):
            rules[("swap:" if swap else "") + rule].append((i, low, art + new))
    if not rules:
        return None
    keys = sorted(rules)
    rng.shuffle(keys)
    k = 1 if rng.random() < 0.6 or len(keys) == 1 else 2
    chosen: list[tuple[str, list[tuple[int, str, str]]]] = []
    touched: set[int] = set()
    for key in keys:
        edits = rules[key]
        if key.startswith("swap:"):
            edits = [edits[0]]
        if any(i in touched for i, _, _ in edits):
            continue
        chosen.append((key, edits))
        touched |= {i for i, _, _ in edits}
        if len(chosen) == k:
            break
    new_toks = list(toks)
    notes = []
    for key, edits in chosen:
        for i, old, new in edits:
            new_toks[i] = new
        notes.append(f"{key.replace('swap:', '')} in " + ", ".join(f"'{old}'" for _, old, _ in edits))
    v = " ".join(new_toks)
    vts = tokset(v)
    if vts == tokset(base) or any(tokset(n) == vts for n in e.all_names if is_latin(n)):
        return None
    return typed(v, rng, 0.1, 0.05), "; ".join(notes)


# Latin -> Cyrillic (Russian-style) and -> Greek, for the synthetic script category
CYR_MULTI = [("shch", "щ"), ("sch", "щ"), ("iya", "ия"), ("iyu", "ию"), ("iye", "ие"), ("kh", "х"), ("zh", "ж"), ("ch", "ч"), ("sh", "ш"),
             ("ts", "ц"), ("yu", "ю"), ("ya", "я"), ("yo", "ё"), ("ye", "е"), ("iy", "ий"),
             ("ii", "ий"), ("ey", "ей"), ("ay", "ай"), ("oy", "ой"), ("uy", "уй"), ("ou", "у"),
             ("ph", "ф"), ("th", "т"), ("ck", "к"), ("dj", "дж"), ("gh", "г"), ("ee", "и"),
             ("oo", "у")]
CYR_ONE = {"a": "а", "b": "б", "v": "в", "g": "г", "d": "д", "e": "е", "z": "з", "i": "и",
           "k": "к", "l": "л", "m": "м", "n": "н", "o": "о", "p": "п", "r": "р", "s": "с",
           "t": "т", "u": "у", "f": "ф", "h": "х", "c": "к", "j": "дж", "q": "к", "w": "в",
           "x": "кс", "y": "ы"}


CYR_MARK = {"\x01": "е", "\x02": "й", "\x03": "и", "\x04": "ь"}


def to_cyrillic(word: str, slavic: bool = False) -> str:
    w_ = strip_accents(word).lower()
    # Russian spelling conventions, marked with placeholders before the letter-by-letter pass:
    # "ee" is ее in a Russian name ("Sergeevna") but an i sound elsewhere ("Rasheed" -> Рашид);
    # "e"/"ye" after a vowel is е ("Nikolayevna" -> Николаевна); "i" closing a vowel is й
    # ("Eismont" -> Эйсмонт) except in "-ail" ("Mikhail" -> Михаил); a soft sign before
    # "ye"/"yi" and a final "ya" after a consonant ("Grigoryev", "Ilyich", "Ilya").
    if not slavic:
        w_ = w_.replace("ee", "\x03")
    w_ = re.sub(r"(?<=[aeiou])y?e", "\x01", w_)
    w_ = re.sub(r"(?<=[aeiou])i(?!l$)(?=[^aeiou]|$)", "\x02", w_)
    w_ = re.sub(r"(?<=[bcdfgklmnpqrstvz])y(?=e|i)", "\x04", w_)
    w_ = re.sub(r"(?<=[bcdfgklmnpqrstvz])(?=ya$)", "\x04", w_)
    w_ = re.sub(r"\x04e", "\x04\x01", w_)
    out = []
    i = 0
    while i < len(w_):
        ch = w_[i]
        if ch in CYR_MARK:
            out.append(CYR_MARK[ch])
            i += 1
            continue
        if not ch.isalpha():
            out.append(ch)
            i += 1
            continue
        if i == 0 and ch == "e":
            out.append("е" if slavic else "э")
            i += 1
            continue
        for lat, cyr in CYR_MULTI:
            if w_.startswith(lat, i):
                out.append(cyr)
                i += len(lat)
                break
        else:
            if ch == "y":
                prev = w_[i - 1] if i else ""
                out.append("й" if (not prev or prev in "aeiou") else "ы")
            else:
                out.append(CYR_ONE.get(ch, ch))
            i += 1
    s = "".join(out)
    return s[:1].upper() + s[1:]


GREEK_MULTI = [("nd", "ντ"), ("mb", "μπ"), ("ks", "ξ"), ("ch", "τσ"), ("sh", "σ"), ("kh", "χ"), ("th", "θ"), ("ts", "τσ"), ("ps", "ψ"),
               ("ou", "ου"), ("ph", "φ"), ("zh", "ζ"), ("dj", "τζ")]
GREEK_ONE = {"a": "α", "b": "μπ", "v": "β", "g": "γ", "d": "ντ", "e": "ε", "z": "ζ", "i": "ι",
             "k": "κ", "l": "λ", "m": "μ", "n": "ν", "o": "ο", "p": "π", "r": "ρ", "s": "σ",
             "t": "τ", "u": "ου", "f": "φ", "h": "χ", "c": "κ", "j": "τζ", "q": "κ", "w": "ου",
             "x": "ξ", "y": "ι"}


def to_greek(word: str) -> str:
    w_ = strip_accents(word).lower()
    out = []
    i = 0
    while i < len(w_):
        for lat, gr in GREEK_MULTI:
            if w_.startswith(lat, i):
                out.append(gr)
                i += len(lat)
                break
        else:
            out.append(GREEK_ONE.get(w_[i], w_[i]))
            i += 1
    s = "".join(out)
    s = re.sub(r"σ$", "ς", s)
    return s.upper()


LAT_OF_CYR = dict(zip("абвгдеёжзиіїйклмнопрстуфхцчшщъыьэюяєґ",
                      "a b v g d e e zh z i i i y k l m n o p r s t u f kh ts ch sh shch _ y _ e yu ya ye g"
                      .split()))


def cyr_to_latin(s: str) -> str:
    return "".join(LAT_OF_CYR.get(c, c) for c in s.lower()).replace("_", "")


def closest_latin(cyr: str, latins: list[str], floor: float = 0.85) -> str | None:
    """The Latin name whose words best match the (roughly romanised) Cyrillic name's words."""
    ct = [t for t in content_tokens(cyr_to_latin(cyr)) if len(t) > 1]
    best, best_score = None, floor
    for lat in latins:
        lt = [t for t in content_tokens(lat) if len(t) > 1]
        if not ct or not lt:
            continue
        score = sum(max(jaro_winkler(c, l) for l in lt) for c in ct) / len(ct)
        if score >= best_score:
            best, best_score = lat, score
    return best


def gen_script_synthetic(e: Ent, rng, w: World, greek=False):
    iu = individual_units(e)
    if not iu:
        return None
    g, s = iu
    words = " ".join(g + s).replace("-", " ").split()
    if len(words) < 2 or len(words) > 4:
        return None
    if any(not re.fullmatch(r"[A-Za-z'’]+", strip_accents(x)) for x in words):
        return None
    if greek:
        v = " ".join(to_greek(x.replace("'", "")) for x in words)
        return v, "Latin name written in Greek letters (generated)"
    v = " ".join(to_cyrillic(x.replace("'", ""), e.culture == "slavic") for x in words)
    return v, "Latin name written in Cyrillic, Russian-style (generated)"


def gen_nickname(e: Ent, rng, w: World):
    iu = individual_units(e)
    if not iu:
        return None
    g, s = iu
    first = g[0].lower().strip(".")
    rest = [x for x in g[1:] if not is_initial(x)]
    if first in NICK_OF and NICK_OF[first]:
        alt = rng.choice(NICK_OF[first])
        note = f"formal '{first}' -> nickname '{alt}'"
    elif first in FORMAL_OF:
        alt = rng.choice(FORMAL_OF[first])
        note = f"nickname '{first}' -> formal '{alt}'"
    else:
        return None
    v = " ".join([alt.capitalize()] + rest + s)
    return v, note


def gen_pep_missing_middle(e: Ent, rng, w: World):
    iu = individual_units(e)
    if not iu:
        return None
    g, s = iu
    if len(g) < 2:
        return None
    v = " ".join([g[0]] + s)
    if w.ambiguous(v, "pep", w.linked[e.id]):
        return None
    return v, f"dropped middle '{' '.join(g[1:])}'"


def gen_pep_reorder(e: Ent, rng, w: World):
    iu = individual_units(e)
    if not iu:
        return None
    g, s = iu
    if rng.random() < 0.6:
        v = " ".join(s) + ", " + " ".join(g)
    else:
        v = " ".join(s + [x for x in g if not is_initial(x)])
    return (v.upper() if rng.random() < 0.3 else v), "written surname first"


# --------------------------------------------------------------------------------------------
# Negative generators
# --------------------------------------------------------------------------------------------


def common_name(rng: random.Random, culture: str) -> tuple[str, str]:
    firsts, lasts = POOLS[culture]
    f = rng.choice(firsts)
    female = f in FEMALE
    l = rng.choice(lasts)
    three = rng.random() < 0.3
    if culture == "russian":
        if female and re.search(r"(ov|ev|in)$", l):
            l += "a"
        if three:
            pat = rng.choice(RUS_PATRONYMICS)[1 if female else 0]
            return f"{f} {pat} {l}", culture
        return f"{f} {l}", culture
    if culture == "chinese":
        return (f"{l} {f}" if rng.random() < 0.6 else f"{f} {l}"), culture
    if culture == "spanish" and three:
        l2 = rng.choice([x for x in lasts if x != l])
        return f"{f} {l} {l2}", culture
    if culture == "arabic" and three:
        father = rng.choice([x for x in firsts if x not in FEMALE and x != f])
        return f"{f} {father} {l}", culture
    if three:
        mid = rng.choice([x for x in firsts if (x in FEMALE) == female and x != f])
        return f"{f} {mid} {l}", culture
    return f"{f} {l}", culture


KOREAN_GIVEN = ("Min-jun Seo-yeon Ji-hoon Ha-eun Do-yun Su-bin Hyun-woo Ji-woo Jae-won Eun-ji "
                "Sung-min Young-ho Dong-hyun Hye-jin Kyung-soo Mi-young Sang-woo Yu-na Tae-yang "
                "Jin-ho").split()
KOREAN_SURNAME_POOL = "Kim Lee Park Choi Jung Kang Cho Yoon Jang Lim Han Oh Seo Shin Kwon Hwang Ahn Song".split()
CULTURE_POOL = {"arabic": "arabic", "slavic": "russian", "spanish": "spanish"}


def is_female_form(tok: str, culture: str) -> bool | None:
    """Gender evident from the form of a name part (Slavic endings, known female names)."""
    t = strip_accents(tok)
    if culture == "slavic":
        return t.lower().endswith(("a", "ya"))
    if t.title() in FEMALE or t in FEMALE:
        return True
    return None


def common_pool(culture: str, surname_tok: str, american: bool = False):
    """(first names, surnames) of ordinary people of the culture a listed name belongs to."""
    if american:
        return POOLS["english"][0] + US_EXTRA_FIRST, POOLS["english"][1] + US_EXTRA_LAST
    if culture == "korean":
        return KOREAN_GIVEN, KOREAN_SURNAME_POOL
    if culture in CULTURE_POOL:
        return POOLS[CULTURE_POOL[culture]]
    low = strip_accents(surname_tok).lower()
    for cult, (fs, ls) in POOLS.items():
        if low in {strip_accents(x).lower() for x in ls}:
            return POOLS[cult]
    return (POOLS["english"][0] + POOLS["nigerian"][0] + POOLS["indian"][0],
            POOLS["english"][1] + POOLS["nigerian"][1] + POOLS["indian"][1])


def dissimilar(a: str, b: str, limit=0.7) -> bool:
    a, b = strip_accents(a).lower(), strip_accents(b).lower()
    if tok_similar(a, b) or canon(a) == canon(b):
        return False
    if b in NICK_OF.get(a, []) or a in NICK_OF.get(b, []) or b in FORMAL_OF.get(a, []) or a in FORMAL_OF.get(b, []):
        return False
    return jaro_winkler(a, b) < limit


def _pick(pool, rng, ok, tries=40):
    for _ in range(tries):
        c = rng.choice(pool)
        if ok(c):
            return c
    return None


def gen_shared_token_person(e: Ent, rng, w: World, american: bool = False):
    iu = individual_units(e, strip_title=True)
    if not iu:
        return None
    g, s = iu
    first, last = g[0], s[-1]
    if is_initial(first) or len(re.sub(r"[^A-Za-z]", "", strip_accents(first))) < 3 or e.culture == "burmese":
        return None
    firsts, lasts = common_pool(e.culture, last, american)
    korean = e.culture == "korean" and not american
    if rng.random() < 0.55:
        removed = " ".join(g[1:] + s).replace("-", " ").split()
        fem = is_female_form(last, e.culture)
        rep = _pick(lasts, rng, lambda c: all(dissimilar(r, c) for r in removed))
        if not rep:
            return None
        if e.culture == "slavic" and fem and re.search(r"(ov|ev|in)$", rep):
            rep += "a"
        kept = title(first)
        v = f"{rep} {kept}" if korean else f"{kept} {rep}"
        return v, "first", f"kept first name '{first}', surname replaced"
    kept = title(" ".join(s))
    removed = " ".join(g).replace("-", " ").split()
    fem = is_female_form(last, e.culture) if e.culture == "slavic" else is_female_form(first, e.culture)

    def ok(c):
        if not all(dissimilar(r, c) for r in removed):
            return False
        if e.culture == "slavic" and fem is not None and (c in FEMALE) != fem:
            return False
        return True

    rep = _pick(firsts, rng, ok)
    if not rep:
        return None
    v = f"{kept} {rep}" if korean else f"{rep} {kept}"
    return v, "surname", f"kept surname '{' '.join(s)}', given name(s) replaced"


def entity_parts(name: str):
    toks = strip_accents(clean_entity_name(name)).split()
    kinds = []
    for t in toks:
        n = normalize(t)
        if not n:
            kinds.append("punct")
        elif all(x in LEGAL_CANON or x in LEGAL_SINGLE or x in FOREIGN_FORMS or len(x) == 1 for x in n):
            kinds.append("legal")
        elif all(x in GENERIC_WORDS for x in n):
            kinds.append("generic")
        else:
            kinds.append("distinct")
    return toks, kinds


def gen_shared_token_entity(e: Ent, rng, w: World):
    """'GHADIR INDUSTRIAL TRADING' -> 'Sandstone Industrial Trading': the distinctive words that
    open the name are replaced by one unrelated word; the generic words and legal form stay."""
    if e.etype != "entity":
        return None
    toks, kinds = entity_parts(e.primary)
    if len(toks) > 6 or not kinds or kinds[0] != "distinct":
        return None
    n = 0
    while n < len(kinds) and kinds[n] == "distinct":
        n += 1
    rest, rest_kinds = toks[n:], kinds[n:]
    if "distinct" in rest_kinds:
        return None
    stop = ("of", "the", "and", "de", "la", "del", "y", "for", "in", "on", "at", "to", "a", "an")
    if not any(k == "generic" and normalize(t) and normalize(t)[0] not in stop
               for t, k in zip(rest, rest_kinds)):
        return None
    if normalize(rest[0]) and normalize(rest[0])[0] in ("of", "the", "and", "de", "la", "del", "y", "for", "in"):
        return None
    removed = " ".join(toks[:n])
    rep_ = _pick(COMPANY_WORDS, rng, lambda c: all(dissimilar(x, c) for x in normalize(removed)))
    if not rep_:
        return None
    v = " ".join([rep_.upper() if removed.isupper() else rep_] + rest)
    return typed(v, rng, 0.3, 0.1), "word", f"kept generic word(s), replaced '{removed}'"


def lookalike_pools(w: World) -> dict[str, tuple[list[str], list[str]]]:
    """Per culture: given names and surnames seen on the lists plus the common-name pools."""
    out: dict[str, tuple[set, set]] = collections.defaultdict(lambda: (set(), set()))
    first_count: collections.Counter = collections.Counter()
    for e in w.ents:
        iu = individual_units(e)
        if iu and e.kind == "sanction":
            first_count[title(strip_accents(iu[0][0]))] += 1
    for e in w.ents:
        iu = individual_units(e)
        if not iu or e.kind != "sanction":
            continue
        # only names whose culture shows in the name itself, not just in the sanctions programme
        if guess_culture(e.natural() or e.primary, "", "") != e.culture:
            continue
        f, l = strip_accents(iu[0][0]), strip_accents(iu[1][-1])
        if re.fullmatch(r"[A-Za-z]{3,}", f) and first_count[title(f)] >= 3:
            out[e.culture][0].add(title(f))
        if re.fullmatch(r"(?:(?:Al|AL|al|El|EL|el)-)?[A-Za-z]{3,}", l):
            out[e.culture][1].add(title(l))
    for cult, pool in CULTURE_POOL.items():
        out[cult][0].update(strip_accents(x) for x in POOLS[pool][0])
        out[cult][1].update(strip_accents(x) for x in POOLS[pool][1])
    for pool in ("english", "nigerian", "indian"):
        out["other"][0].update(strip_accents(x) for x in POOLS[pool][0])
        out["other"][1].update(strip_accents(x) for x in POOLS[pool][1])
    return {k: (sorted(v[0]), sorted(v[1])) for k, v in out.items()}


_LOOKALIKE_POOLS: dict = {}


def lookalike(tok: str, pool: list[str], rng: random.Random, lo=0.70, hi=0.87) -> str | None:
    """A different real name of similar shape: same initial, Jaro-Winkler in [lo, hi), at least
    two edits apart, and not a spelling variant, nickname or skeleton-equal form."""
    low = strip_accents(tok).lower().replace("-", "")
    if len(low) < 3:
        return None
    cands = []
    for p in pool:
        pl = p.lower().replace("-", "")
        if pl == low or pl[0] != low[0] or pl in PARTICLES or pl in TITLE_LIKE or len(pl) < 3:
            continue
        jw = jaro_winkler(low, pl)
        if lo <= jw < hi and levenshtein(low, pl) >= 2 and dissimilar(low, pl, 1.01):
            cands.append(p)
    return rng.choice(cands) if cands else None


def gen_near_name_person(e: Ent, rng, w: World):
    iu = individual_units(e, strip_title=True)
    if not iu or e.culture not in ("slavic", "arabic", "spanish"):
        return None
    g, s = iu
    first, last = strip_accents(g[0]), strip_accents(s[-1])
    if is_initial(first) or " " in first or " " in last:
        return None
    firsts, lasts = _LOOKALIKE_POOLS.get(e.culture, _LOOKALIKE_POOLS["other"])
    m = re.match(r"(?i)^((?:al|el)-)(.*)$", last)
    pre, core = (m.group(1), m.group(2)) if m else ("", last)
    slav = e.culture == "slavic"
    mids = " ".join(g[1:]).lower()
    fem = (first.lower().endswith("a") or bool(re.search(r"(ovna|evna|ichna|ivna)\b", mids))) and \
        not re.search(r"(vich|ych)\b", mids)
    fem_l = fem_f = fem
    if slav:
        lpool = [x for x in lasts if bool(re.search(r"(ova|eva|ina|aya|yna)$", x.lower())) == fem_l
                 and (fem_l or not x.lower().endswith("a"))]
        fpool = [x for x in firsts if x.lower().endswith("a") == fem_f]
    else:
        lpool = sorted({re.sub(r"(?i)^(al|el)-", "", x) for x in lasts})
        fpool = firsts
    rep_l = lookalike(core, lpool, rng)
    rep_f = lookalike(first, fpool, rng)
    if not rep_l or not rep_f:
        return None
    v = f"{title(rep_f)} {title(pre) + title(rep_l)}"
    return v, "person", f"look-alike but different names: '{first}'->'{rep_f}', '{last}'->'{pre}{rep_l}'"


def gen_near_name_entity(e: Ent, rng, w: World):
    if e.etype != "entity":
        return None
    toks, kinds = entity_parts(e.primary)
    dist = [i for i, k in enumerate(kinds) if k == "distinct"]
    if len(dist) != 1 or len(toks) > 6 or "generic" not in kinds:
        return None
    i = dist[0]
    core = re.sub(r"[^A-Za-z]", "", toks[i])
    if len(core) < 4 or core != toks[i].strip(",.") :
        return None
    rep = lookalike(core, PLACE_WORDS + COMPANY_WORDS, rng, 0.70, 0.88)
    if not rep:
        return None
    new = list(toks)
    new[i] = rep.upper() if toks[i].isupper() else rep
    v = " ".join(new)
    return typed(v, rng, 0.3, 0.1), "entity", f"look-alike but different word: '{toks[i]}'->'{rep}'"


# --------------------------------------------------------------------------------------------
# Hand-written pairs
# --------------------------------------------------------------------------------------------

HAND_PAIRS = [
    # (a, b, match, category)
    ("Usama bin Laden", "Osama bin Ladin", True, "pair-transliteration-variant"),
    ("Muammar Qaddafi", "Moammar Gadhafi", True, "pair-transliteration-variant"),
    ("Abdul Rahman", "Abdulrahman", True, "pair-join-split"),
    ("Aleksandr Lukashenko", "Alexander Lukashenka", True, "pair-transliteration-variant"),
    ("Владимир Путин", "Vladimir Putin", True, "pair-transliteration-original-script"),
    ("محمد", "Mohammed", True, "pair-transliteration-original-script"),
    ("Kim Jong Un", "Kim Jong-un", True, "pair-join-split"),
    ("Ayman al-Zawahiri", "Aiman Al Zawahry", True, "pair-transliteration-variant"),
    ("Hassan Nasrallah", "Hasan Nasrallah", True, "pair-transliteration-variant"),
    ("Mahmoud Ahmadinejad", "Mahmud Ahmadinezhad", True, "pair-transliteration-variant"),
    ("Sergei Lavrov", "Sergey Lavrov", True, "pair-transliteration-variant"),
    ("Yevgeny Prigozhin", "Evgeniy Prigozhin", True, "pair-transliteration-variant"),
    ("Рамзан Кадыров", "Ramzan Kadyrov", True, "pair-transliteration-original-script"),
    ("Bashar al-Assad", "Bashar Al Asad", True, "pair-transliteration-variant"),
    ("Hizballah", "Hezbollah", True, "pair-transliteration-variant"),
    ("Al-Qaida", "Al Qaeda", True, "pair-transliteration-variant"),
    ("Al-Qaida", "Alqaida", True, "pair-join-split"),
    ("Rosoboronexport", "Rosoboroneksport", True, "pair-transliteration-variant"),
    ("Sberbank of Russia PJSC", "Public Joint Stock Company Sberbank of Russia", True, "pair-company-form"),
    ("Ali Hosseini Khamenei", "Ali Husseini Khamenei", True, "pair-transliteration-variant"),
    ("习近平", "Xi Jinping", True, "pair-transliteration-original-script"),
    ("Mikhail Gorbachev", "Mikhail Gorbachyov", True, "pair-transliteration-variant"),
    ("Dmitry Medvedev", "Dmitrii Medvedev", True, "pair-transliteration-variant"),
    ("Joaquín Guzmán Loera", "Joaquin Guzman Loera", True, "pair-diacritics"),
    ("Robert Menendez", "Bob Menendez", True, "pair-nickname"),
    ("CHANG GUANG SATELLITE TECHNOLOGY CO., LTD.", "Chang Guang Satellite Technology Company Limited", True, "pair-company-form"),
    ("George Bush", "George Habbash", False, "pair-negative-shared-first-name"),
    ("Vladimir Putin", "Vladimir Petrov", False, "pair-negative-shared-first-name"),
    ("John Smith", "Jon Smithers", False, "pair-negative-near-name"),
    ("Bank of China", "Bank of Cyprus", False, "pair-negative-shared-word"),
    ("Al Rashid Trust", "Al Rasheed Bank", False, "pair-negative-shared-word"),
    ("Saddam Hussein", "Saddam Haftar", False, "pair-negative-shared-first-name"),
    ("Hassan Rouhani", "Hassan Nasrallah", False, "pair-negative-shared-first-name"),
    ("Kim Jong Un", "Kim Jong Il", False, "pair-negative-near-name"),
    ("Kim Jong Un", "Kim Yo Jong", False, "pair-negative-near-name"),
    ("Igor Sechin", "Igor Sechenov", False, "pair-negative-near-name"),
    ("Aleksandr Lukashenko", "Aleksandr Lukin", False, "pair-negative-shared-first-name"),
    ("Rosneft", "Rostec", False, "pair-negative-near-name"),
    ("Bank Melli Iran", "Bank Mellat", False, "pair-negative-shared-word"),
    ("Maria Zakharova", "Maria Zakharchenko", False, "pair-negative-near-name"),
    ("Joaquin Guzman", "Joaquin Phoenix", False, "pair-negative-shared-first-name"),
    ("Muhammad Yunus", "Muhammad Yusuf", False, "pair-negative-near-name"),
    ("China National Petroleum Corporation", "China National Chemical Corporation", False, "pair-negative-shared-word"),
    ("Islamic Revolutionary Guard Corps", "Islamic Relief Worldwide", False, "pair-negative-shared-word"),
    ("Viktor Bout", "Viktor Orban", False, "pair-negative-shared-first-name"),
    ("Emirates NBD", "Emirates Airline", False, "pair-negative-shared-word"),
    ("Mohammed bin Salman", "Mohammed bin Rashid", False, "pair-negative-shared-first-name"),
    ("Mahmoud Abbas", "Mahmoud Ahmadinejad", False, "pair-negative-shared-first-name"),
    ("Sergey Ivanov", "Sergey Ivanenko", False, "pair-negative-near-name"),
    ("Tariq Aziz", "Tariq Ramadan", False, "pair-negative-shared-first-name"),
    ("Viktor Yanukovych", "Viktor Yushchenko", False, "pair-negative-near-name"),
    ("Ali Khamenei", "Ali Khan", False, "pair-negative-shared-first-name"),
]


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------

QUERY_TARGETS = {
    "exact-primary": 150,
    "alias": 200,
    "reorder": 130,
    "typo": 200,
    "missing-middle": 100,
    "initials": 70,
    "join-split": 110,
    "company-form": 150,
    "transliteration-variant": 220,
    "script-synthetic": 130,
    "pep-exact": 25,
    "pep-reorder": 20,
    "pep-missing-middle": 35,
    "pep-typo": 35,
    "nickname": 25,
    "negative-common-name": 250,
    "negative-shared-token": 160,
    "negative-near-name": 110,
    "negative-pep-common-name": 70,
    "negative-pep-shared-token": 30,
    "negative-synthetic-person": 2000,
}
PAIR_TARGETS = {
    "pair-reorder": 80,
    "pair-typo": 150,
    "pair-missing-middle": 70,
    "pair-initials": 40,
    "pair-join-split": 100,
    "pair-company-form": 90,
    "pair-transliteration-variant": 200,
    "pair-transliteration-original-script": 150,
    "pair-script-synthetic": 70,
    "pair-nickname": 20,
    "pair-negative-shared-first-name": 130,
    "pair-negative-shared-surname": 100,
    "pair-negative-shared-word": 80,
    "pair-negative-near-name": 170,
}
LIST_WEIGHTS = {"ofac-sdn": 0.5, "uk": 0.27, "un": 0.2, "zala": 0.03}
COUNTRY_SHARE = 0.6
# Categories open to both kinds draw entities more often than individuals, because several
# categories (original script, reorder, middle names, initials) only exist for individuals;
# overall the positive sanction queries come out at about 60 % individuals, 40 % entities.
MIXED_ENTITY_SHARE = 0.7  # of UN-derived positives with a clean single nationality, in some categories
COUNTRY_CATEGORIES = {"reorder", "typo", "transliteration-variant", "missing-middle"}


class Gen:
    def __init__(self, w: World):
        self.w = w
        self.lines: list[dict] = []
        self.seen_queries: set[tuple[str, str]] = set()
        self.seen_pairs: set[tuple[str, str]] = set()
        self.used: dict[str, set[str]] = collections.defaultdict(set)
        self.pools: dict[tuple[str, str], list[Ent]] = {}
        for e in w.ents:
            if e.kind == "sanction" and e.etype in ("individual", "entity") and e.target:
                self.pools.setdefault((e.list, e.etype), []).append(e)
        self.pep = [e for e in w.ents if e.kind == "pep"]
        # congress members whose name collides with another member are ambiguous: skip
        self.pep = [e for e in self.pep if len(w.linked[e.id]) == 1]

    def sample_sanction(self, rng, etype=None) -> Ent:
        lists = list(LIST_WEIGHTS)
        while True:
            lst = rng.choices(lists, weights=[LIST_WEIGHTS[x] for x in lists])[0]
            t = etype or ("entity" if rng.random() < MIXED_ENTITY_SHARE else "individual")
            pool = self.pools.get((lst, t))
            if pool:
                return rng.choice(pool)

    def add_query(self, query, lists, expect, category, source, country=None) -> bool:
        key = (query.casefold().strip(), lists)
        if not query.strip() or key in self.seen_queries:
            return False
        self.seen_queries.add(key)
        d = {"kind": "query", "query": query, "lists": lists, "expect": expect,
             "category": category, "source": source}
        if country:
            d["country"] = country
        self.lines.append(d)
        return True

    def add_pair(self, a, b, match, category, source) -> bool:
        key = (a.casefold(), b.casefold())
        if key in self.seen_pairs or a.casefold() == b.casefold():
            return False
        self.seen_pairs.add(key)
        self.lines.append({"kind": "pair", "a": a, "b": b, "match": match, "category": category,
                           "source": source})
        return True

    # -- positives ------------------------------------------------------------------------

    def positive_queries(self, category, n, fn, rng, etype=None, pep=False, max_tries=200000):
        got = 0
        tries = 0
        while got < n and tries < max_tries:
            tries += 1
            e = rng.choice(self.pep) if pep else self.sample_sanction(rng, etype)
            if e.id in self.used[category]:
                continue
            r = fn(e, rng, self.w)
            if not r:
                continue
            v, note = r
            self.used[category].add(e.id)
            country = None
            if (category in COUNTRY_CATEGORIES and e.list == "un" and e.countries
                    and rng.random() < COUNTRY_SHARE):
                country = e.countries[0]
            src = f"{e.id} '{e.primary}': {note}"
            if self.add_query(v, "pep" if pep else "sanction", self.w.expect(e, v), category, src, country):
                got += 1
        return got

    def positive_pairs(self, category, n, fn, rng, etype=None, pep=False, qcat=None):
        got = 0
        tries = 0
        while got < n and tries < 200000:
            tries += 1
            e = rng.choice(self.pep) if pep else self.sample_sanction(rng, etype)
            if e.id in self.used[category] or (qcat and e.id in self.used[qcat]):
                continue
            r = fn(e, rng, self.w)
            if not r:
                continue
            v, note = r
            self.used[category].add(e.id)
            a = e.primary if rng.random() < 0.5 or e.etype != "individual" else title(base_form(e))
            if self.add_pair(a, v, True, category, f"{e.id}: {note}"):
                got += 1
        return got

    # -- negatives ------------------------------------------------------------------------

    def negative_common(self, n, rng, kind, category, american=False):
        cultures = list(POOLS)
        got = 0
        tries = 0
        rejected = 0
        while got < n and tries < 100000:
            tries += 1
            if american:
                f = rng.choice(POOLS["english"][0] + US_EXTRA_FIRST + POOLS["spanish"][0][:20])
                l = rng.choice(POOLS["english"][1] + US_EXTRA_LAST)
                if rng.random() < 0.25:
                    mid = rng.choice("A B C D E F G H J K L M P R S T W".split())
                    name, cult = f"{strip_accents(f)} {mid}. {l}", "american"
                else:
                    name, cult = f"{strip_accents(f)} {l}", "american"
            else:
                cult = cultures[got % len(cultures)]
                name, _ = common_name(rng, cult)
                if rng.random() < 0.5:
                    name = strip_accents(name)
                name = typed(name, rng, 0.2, 0.05)
            why = self.w.collides(name, kind)
            if why:
                rejected += 1
                continue
            if self.add_query(name, kind, [], category, f"random {cult} first+last name; no listed name contains it"):
                got += 1
        return got, rejected

    def negative_synthetic_person(self, n, rng, category):
        """Synthetic customers as a population looks: common first and family names of every
        culture, screened against all lists. Unlike negative-common-name, a candidate is only
        rejected when one listed name holds every one of its tokens exactly (a near spelling of
        a listed name stays in: that is the hard case), so these measure how often ordinary
        people reach the match threshold."""
        cultures = list(POOLS)
        got = rejected = tries = 0
        while got < n and tries < 100000:
            tries += 1
            if rng.random() < 0.3:
                name = f"{rng.choice(POOLS['english'][0] + US_EXTRA_FIRST)} {rng.choice(POOLS['english'][1] + US_EXTRA_LAST)}"
            else:
                name, _ = common_name(rng, rng.choice(cultures))
                if rng.random() < 0.5:
                    name = strip_accents(name)
            if self.w.exactly_listed(name):
                rejected += 1
                continue
            if self.add_query(name, None, [], category, "random first+last name; no listed name holds all its tokens"):
                got += 1
        return got, rejected

    def negative_from_entity(self, n, rng, kind, category, fns, pair_mode=False, pair_cats=None):
        got = 0
        tries = 0
        rejected = 0
        while got < n and tries < 200000:
            tries += 1
            fn, etype = rng.choice(fns)
            if kind == "pep":
                e = rng.choice(self.pep)
            else:
                e = self.sample_sanction(rng, etype)
            ukey = category + ("/pair" if pair_mode else "")
            if e.id in self.used[ukey]:
                continue
            r = fn(e, rng, self.w)
            if not r:
                continue
            v, sub, note = r
            why = self.w.collides(v, kind, entity_mode=(e.etype == "entity"))
            if why:
                rejected += 1
                continue
            self.used[ukey].add(e.id)
            if pair_mode:
                cat = pair_cats[sub]
                a = e.primary if e.etype != "individual" or rng.random() < 0.5 else title(base_form(e))
                if self.add_pair(a, v, False, cat, f"{e.id}: {note}"):
                    got += 1
            else:
                if self.add_query(v, kind, [], category, f"from {e.id} '{e.primary}': {note}"):
                    got += 1
        return got, rejected


def build(w: World, rng_seed=SEED) -> tuple[list[dict], dict]:
    _LOOKALIKE_POOLS.clear()
    _LOOKALIKE_POOLS.update(lookalike_pools(w))
    g = Gen(w)
    info = {}

    def R(tag):  # an independent, reproducible random stream per generator
        return random.Random(f"{rng_seed}:{tag}")

    # ---- real original-script names: all of them
    ocount = 0
    for e in w.ents:
        if e.kind != "sanction" or not e.orig_script or not e.target:
            continue
        for n in e.orig_script:
            src = (f"{e.id} NAME_ORIGINAL_SCRIPT (publisher data) of '{e.primary}'" if e.list == "un"
                   else f"{e.id} published {script_of(n).title()} name (publisher data) of '{e.primary}'")
            if g.add_query(n, "sanction", w.expect(e), "transliteration-original-script", src):
                ocount += 1
    info["original-script queries"] = ocount

    Q = QUERY_TARGETS
    g.positive_queries("exact-primary", Q["exact-primary"], gen_exact, R("exact"))
    g.positive_queries("alias", Q["alias"], gen_alias, R("alias"))
    g.positive_queries("reorder", Q["reorder"], gen_reorder, R("reorder"), etype="individual")
    g.positive_queries("typo", Q["typo"], gen_typo, R("typo"))
    g.positive_queries("missing-middle", Q["missing-middle"], gen_missing_middle, R("mm"), etype="individual")
    g.positive_queries("initials", Q["initials"], gen_initials, R("ini"), etype="individual")
    g.positive_queries("join-split", Q["join-split"], gen_join_split, R("js"))
    g.positive_queries("company-form", Q["company-form"], gen_company_form, R("cf"), etype="entity")
    g.positive_queries("transliteration-variant", Q["transliteration-variant"], gen_translit, R("tv"))
    n_greek = 20
    g.positive_queries("script-synthetic", Q["script-synthetic"] - n_greek, gen_script_synthetic,
                       R("cyr"), etype="individual")
    g.positive_queries("script-synthetic", n_greek,
                       lambda e, r, ww: gen_script_synthetic(e, r, ww, greek=True), R("greek"),
                       etype="individual")
    # PEP positives
    g.positive_queries("pep-exact", Q["pep-exact"], gen_exact, R("pexact"), pep=True)
    g.positive_queries("pep-reorder", Q["pep-reorder"], gen_pep_reorder, R("preorder"), pep=True)
    g.positive_queries("pep-missing-middle", Q["pep-missing-middle"], gen_pep_missing_middle, R("pmm"), pep=True)
    g.positive_queries("pep-typo", Q["pep-typo"], gen_typo, R("ptypo"), pep=True)
    g.positive_queries("nickname", Q["nickname"], gen_nickname, R("nick"), pep=True)

    # Negatives
    info["negative-common-name"] = g.negative_common(Q["negative-common-name"], R("ncommon"), "sanction", "negative-common-name")
    info["negative-shared-token"] = g.negative_from_entity(
        Q["negative-shared-token"], R("nshared"), "sanction", "negative-shared-token",
        [(gen_shared_token_person, "individual")] * 3 + [(gen_shared_token_entity, "entity")] * 2)
    info["negative-near-name"] = g.negative_from_entity(
        Q["negative-near-name"], R("nnear"), "sanction", "negative-near-name",
        [(gen_near_name_person, "individual")] * 3 + [(gen_near_name_entity, "entity")])
    info["negative-pep-common-name"] = g.negative_common(Q["negative-pep-common-name"], R("npep"), "pep", "negative-pep-common-name", american=True)
    info["negative-synthetic-person"] = g.negative_synthetic_person(
        Q["negative-synthetic-person"], R("nsynthetic"), "negative-synthetic-person")
    info["negative-pep-shared-token"] = g.negative_from_entity(
        Q["negative-pep-shared-token"], R("npepshared"), "pep", "negative-pep-shared-token",
        [(lambda e, r, ww: gen_shared_token_person(e, r, ww, american=True), "individual")])

    # ---- pairs
    P = PAIR_TARGETS
    for a, b, m, cat in HAND_PAIRS:
        g.add_pair(a, b, m, cat, "hand-written")
    g.positive_pairs("pair-reorder", P["pair-reorder"], gen_reorder, R("p-reorder"), etype="individual", qcat="reorder")
    g.positive_pairs("pair-typo", P["pair-typo"], gen_typo, R("p-typo"), qcat="typo")
    g.positive_pairs("pair-missing-middle", P["pair-missing-middle"], gen_missing_middle, R("p-mm"), etype="individual", qcat="missing-middle")
    g.positive_pairs("pair-initials", P["pair-initials"], gen_initials, R("p-ini"), etype="individual", qcat="initials")
    g.positive_pairs("pair-join-split", P["pair-join-split"], gen_join_split, R("p-js"), qcat="join-split")
    g.positive_pairs("pair-company-form", P["pair-company-form"], gen_company_form, R("p-cf"), etype="entity", qcat="company-form")
    g.positive_pairs("pair-transliteration-variant", P["pair-transliteration-variant"], gen_translit, R("p-tv"), qcat="transliteration-variant")
    g.positive_pairs("pair-script-synthetic", P["pair-script-synthetic"], gen_script_synthetic, R("p-cyr"), etype="individual", qcat="script-synthetic")
    g.positive_pairs("pair-nickname", P["pair-nickname"], gen_nickname, R("p-nick"), pep=True, qcat="nickname")
    # original script pairs: Latin primary vs the publisher's original-script name
    rng = R("p-orig")
    opairs = [(e, n) for e in w.ents if e.kind == "sanction" and e.target for n in e.orig_script]
    rng.shuffle(opairs)
    got = 0
    for e, n in opairs:
        if got >= P["pair-transliteration-original-script"]:
            break
        a = clean_entity_name(e.primary) if e.etype == "entity" else e.primary
        if e.list == "zala":
            # the Latin name this Cyrillic name spells, not e.g. a maiden name
            a = closest_latin(n, [x for x in [e.primary] + e.aliases if is_latin(x)])
            if not a:
                continue
        if g.add_pair(a, n, True, "pair-transliteration-original-script", f"{e.id}: publisher's original-script name"):
            got += 1
    g.negative_from_entity(P["pair-negative-shared-first-name"] + P["pair-negative-shared-surname"],
                           R("p-nshared"), "sanction", "pair-negative-shared", [(gen_shared_token_person, "individual")],
                           pair_mode=True, pair_cats={"first": "pair-negative-shared-first-name",
                                                      "surname": "pair-negative-shared-surname"})
    g.negative_from_entity(P["pair-negative-shared-word"], R("p-nword"), "sanction", "pair-negative-shared-word",
                           [(gen_shared_token_entity, "entity")], pair_mode=True,
                           pair_cats={"word": "pair-negative-shared-word"})
    g.negative_from_entity(P["pair-negative-near-name"], R("p-nnear"), "sanction", "pair-negative-near-name",
                           [(gen_near_name_person, "individual")] * 3 + [(gen_near_name_entity, "entity")],
                           pair_mode=True, pair_cats={"person": "pair-negative-near-name",
                                                      "entity": "pair-negative-near-name"})
    return g.lines, info


def stats(lines: list[dict], etypes: dict[str, str] | None = None) -> str:
    by = collections.Counter((d["kind"], d["category"]) for d in lines)
    kinds = collections.Counter(d["kind"] for d in lines)
    out = []
    for kind in ("query", "pair"):
        out.append(f"{kind}: {kinds[kind]}")
        for (k, c), n in sorted(by.items()):
            if k == kind:
                extra = ""
                if kind == "query":
                    pos = sum(1 for d in lines if d["kind"] == k and d["category"] == c and d["expect"])
                    cty = sum(1 for d in lines if d["kind"] == k and d["category"] == c and d.get("country"))
                    extra = f"  (positive {pos}{', country ' + str(cty) if cty else ''})"
                else:
                    pos = sum(1 for d in lines if d["kind"] == k and d["category"] == c and d["match"])
                    extra = f"  (match {pos})"
                out.append(f"  {c:40s} {n:5d}{extra}")
    q = [d for d in lines if d["kind"] == "query"]
    out.append(f"queries: {sum(1 for d in q if d['expect'])} positive, {sum(1 for d in q if not d['expect'])} negative; "
               f"sanction {sum(1 for d in q if d['lists'] == 'sanction')}, pep {sum(1 for d in q if d['lists'] == 'pep')}")
    lists = collections.Counter(d["source"].split(":")[0] for d in q if d["expect"])
    out.append("positive queries by source list: " + ", ".join(f"{k} {v}" for k, v in sorted(lists.items())))
    if etypes:
        kinds_ = collections.Counter(etypes.get(d["source"].split()[0].rstrip(":"), "?")
                                     for d in q if d["expect"] and d["lists"] == "sanction")
        tot = sum(kinds_.values()) or 1
        out.append("positive sanction queries by source entity type: " + ", ".join(
            f"{k} {v} ({100 * v / tot:.0f}%)" for k, v in sorted(kinds_.items())))
    multi = sum(1 for d in q if len(d["expect"]) > 1)
    out.append(f"queries expecting more than one id (cross-list duplicates): {multi}")
    return "\n".join(out)


def samples(lines: list[dict], n: int, seed=SEED) -> str:
    rng = random.Random(f"{seed}:samples")
    by = collections.defaultdict(list)
    for d in lines:
        by[(d["kind"], d["category"])].append(d)
    out = []
    for key in sorted(by):
        out.append(f"== {key[0]} / {key[1]}")
        for d in rng.sample(by[key], min(n, len(by[key]))):
            if d["kind"] == "query":
                out.append(f"  {d['query']!r} -> {d['expect']}{' country=' + d['country'] if d.get('country') else ''}  | {d['source']}")
            else:
                out.append(f"  {d['a']!r} ~ {d['b']!r} = {d['match']}  | {d.get('source', '')}")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", help="directory with the list files (default: /work/main/lists, "
                    "else /work/shared/data/sanctions)")
    ap.add_argument("--out", default="fixtures/screening/eval.jsonl")
    ap.add_argument("--stats", action="store_true", help="only print the stats of the existing output file")
    ap.add_argument("--samples", type=int, default=10, help="random samples per category to print")
    args = ap.parse_args()

    if args.stats:
        lines = [json.loads(l) for l in open(args.out, encoding="utf-8") if l.strip()]
        print(stats(lines))
        return

    paths = resolve_paths(args.data_dir)
    print("reading", ", ".join(paths.values()), file=sys.stderr)
    ents = load_ofac(paths) + load_un(paths) + load_uk(paths) + load_zala(paths) + load_congress(paths)
    w = World(ents)
    lines, info = build(w)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w", encoding="utf-8", newline="\n") as f:
        for d in lines:
            f.write(json.dumps(d, ensure_ascii=False, separators=(",", ":")) + "\n")
    print(f"wrote {len(lines)} lines, {os.path.getsize(args.out)} bytes to {args.out}")
    for k, v in info.items():
        print(f"  {k}: {v}")
    print(stats(lines, {e.id: e.etype for e in ents}))
    if args.samples:
        print(samples(lines, args.samples))


if __name__ == "__main__":
    main()
