#!/usr/bin/env python3
"""The man page and --help are true to the code.

Every long option of every verb's option table (src/verbs/*.c, `struct
option`) must have a paragraph of its own in the verb's part of
tachyon-top.1 (OPTIONS for the live view, VERBS' subsection for a verb) and
appear in `tachyon-top VERB --help`; a default that --help states must be
the one the man page states; every option the man page names must exist;
every key in the live view's help tables (ui/*.c) must be a key paragraph
under Keys. Then the checks are shown to fail when they should: on copies
of the man page with one option's paragraph removed, an option that does
not exist added, and one key's paragraph removed. Emits TAP.
"""
import os
import re
import subprocess
import sys

SRC = os.environ.get("TT_SRCDIR") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
BIN = os.environ.get("TT_BIN") or os.path.join(SRC, "build", "tachyon-top")

# verb -> its source file; "" is the live view (the main command)
VERBS = {"": "live", "dump": "dump", "record": "record", "replay": "replay",
         "bench": "bench", "info": "info", "watch": "watch"}
# Options of other programs the man page names, and why.
FOREIGN = {"cap-add": "docker run's, for CAP_SYS_PTRACE in a container"}
ARROWS = {"←": "Left", "→": "Right", "↑": "Up", "↓": "Down"}


def option_table(verb):
    """The long options of a verb's `struct option` table."""
    with open(os.path.join(SRC, "src", "verbs", VERBS[verb] + ".c"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"struct option [a-z_]+\[\] = \{(.*?)\n\s*\};", text, re.S)
    if not m:
        raise SystemExit("Bail out! no struct option table in %s.c" % VERBS[verb])
    return [n for n in re.findall(r'\{"([a-z][a-z0-9-]*)"', m.group(1))]


def help_entries(src=SRC):
    """(file, keys, text) for every row of the live view's help tables:
    the shared keys (keys.c) and each view's (a `[][2]` table in its file)."""
    ui = os.path.join(src, "ui")
    for name in sorted(os.listdir(ui)):
        if not name.endswith(".c"):
            continue
        with open(os.path.join(ui, name), encoding="utf-8") as f:
            text = f.read()
        for block in re.findall(r"_help\[\]\[2\] = \{(.*?)\n\};", text, re.S):
            for keys, desc in re.findall(r'\{"([^"]+)", "([^"]*)"\}', block):
                yield name, keys, desc


def help_keys():
    """Every key the live view's help tables list (shared and per view)."""
    return {ARROWS.get(t, t) for _, k, _ in help_entries() for t in k.split()}


def roff_text(line):
    """A roff line as the words it prints: escapes and macro quoting gone."""
    line = re.sub(r"^\.(B|I|BR|BI|IR|RB|IB|RI)\s+", "", line)
    line = line.replace("\\-", "-").replace("\\(em", "-").replace("\\(en", "-")
    line = re.sub(r"\\f(\(..|\[[^]]*\]|.)", "", line)
    line = re.sub(r"\\\[[^]]*\]", "", line).replace("\\&", "").replace("\\ ", " ")
    line = line.replace('"', "")
    return line


def man_parts(man):
    """{part: [(tag, paragraph)]}: part "" is OPTIONS, a verb its VERBS
    subsection, "keys" the live view's Keys; a paragraph is a .TP's tag line
    and the text up to the next paragraph or heading."""
    parts, part, section = {}, None, None
    tag = None
    lines = man.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(".SH"):
            section = roff_text(line[3:]).strip()
            part = "" if section == "OPTIONS" else None
            tag = None
        elif line.startswith(".SS"):
            name = roff_text(line[3:]).strip()
            if section == "VERBS":
                part = name
            elif section == "LIVE VIEW" and name == "Keys":
                part = "keys"
            else:
                part = None
            tag = None
        elif line.startswith((".PP", ".P ", ".LP", ".RE")):
            tag = None
        elif line.startswith(".TP") and part is not None and i + 1 < len(lines):
            i += 1
            tag = [roff_text(lines[i]), ""]
            parts.setdefault(part, []).append(tag)
        elif tag is not None and not line.startswith(".\\\""):
            tag[1] += " " + roff_text(line)
        i += 1
    return parts


def help_options(text):
    """{option: its --help text} for the option lines of a --help."""
    out, current = {}, []
    for line in text.splitlines():
        m = re.match(r"^ {2,6}(-\w, )?--[a-z]", line)
        if m:
            head = re.split(r"\s{2,}", line.strip(), maxsplit=1)
            current = re.findall(r"--([a-z][a-z0-9-]*)", head[0])
            for name in current:
                out[name] = head[1] if len(head) > 1 else ""
        elif current and re.match(r"^ {8,}\S", line):
            for name in current:
                out[name] += " " + line.strip()
        else:
            current = []
    return out


def stated_default(text):
    m = re.search(r"(?:\(|; )default:? ([^;),]+)", " ".join(text.split()))
    return m.group(1).strip() if m else None


def check(man, helps, tables, keys):
    """Every disagreement, one line each."""
    bad = []
    parts = man_parts(man)
    known = set()
    for verb, names in tables.items():
        known.update(names)
        where = "OPTIONS" if verb == "" else "VERBS, %s" % verb
        paras = parts.get(verb, [])
        for name in names:
            mine = [t + " " + p for t, p in paras
                    if re.search(r"(^|[ ,])--%s\b(?!-)" % re.escape(name), t)]
            if not mine:
                bad.append("--%s (%s) has no paragraph in the man page (%s)"
                           % (name, verb or "live view", where))
            if not re.search(r"--%s\b(?!-)" % re.escape(name), helps[verb]):
                bad.append("--%s is missing from `tachyon-top %s--help`"
                           % (name, verb + " " if verb else ""))
            said = stated_default(help_options(helps[verb]).get(name, ""))
            if said and mine and not any(("default " + said) in " ".join(p.split())
                                         or ("default: " + said) in " ".join(p.split())
                                         for p in mine):
                bad.append("--%s (%s): --help says default %s, the man page does not"
                           % (name, verb or "live view", said))
        for t, _ in paras:
            for name in re.findall(r"--([a-z][a-z0-9-]*)", t):
                if name not in names:
                    bad.append("the man page's %s has a paragraph for --%s, which %s does not take"
                               % (where, name, verb or "the live view"))
    for name in sorted(set(re.findall(r"(?<![\w-])--([a-z][a-z0-9-]*)", roff_text(man)))):
        if name not in known and name not in FOREIGN:
            bad.append("the man page names --%s, which no verb takes" % name)
    tags = set()
    for t, _ in parts.get("keys", []):
        tags.update(w for w in re.split(r"[ ,]+", t.replace(" or ", " ")) if w)
    for k in sorted(keys):
        if k not in tags:
            bad.append("key %s (in the live view's help) has no paragraph under Keys" % k)
    return bad


def main():
    with open(os.path.join(SRC, "tachyon-top.1"), encoding="utf-8") as f:
        man = f.read()
    tables = {v: option_table(v) for v in VERBS}
    helps = {}
    for v in VERBS:
        run = subprocess.run([BIN] + ([v] if v else []) + ["--help"], capture_output=True,
                             text=True, timeout=30)
        helps[v] = run.stdout
    keys = help_keys()
    results = []

    bad = check(man, helps, tables, keys)
    results.append((not bad, "every option of %d verbs and %d keys in the man page and "
                    "--help, defaults alike, no option that does not exist" %
                    (len(tables), len(keys)), bad))

    # the checks fail when they should
    m = re.search(r"\n\.TP\n[^\n]*\\-\\-core[^\n]*\n(?:(?!\.TP|\.SS|\.SH|\.PP)[^\n]*\n)*",
                  man[man.find(".SS dump"):])
    if m:
        start = man.find(".SS dump") + m.start()
        cut = man[:start] + "\n" + man[start + len(m.group(0)):]
        bad = check(cut, helps, tables, keys)
        ok = any(b.startswith("--core (dump) has no paragraph") for b in bad)
        results.append((ok, "dump's --core paragraph removed: the check names it", bad))
    else:
        results.append((False, "dump's --core paragraph removed: the check names it",
                        ["no --core paragraph under .SS dump to remove"]))
    bad = check(man.replace(".SH EXIT STATUS", ".SH EXIT STATUS\n\\fB\\-\\-frobnicate\\fR\n"),
                helps, tables, keys)
    results.append((any("--frobnicate, which no verb takes" in b for b in bad),
                    "an option that does not exist named: the check names it", bad))
    m = re.search(r"\n\.TP\n\.B d\n(?:(?!\.TP|\.SS|\.SH)[^\n]*\n)*", man)
    cut = man[:m.start()] + "\n" + man[m.end():] if m else man
    bad = check(cut, helps, tables, keys)
    results.append((any(b.startswith("key d ") for b in bad),
                    "the d key's paragraph removed: the check names it", bad))

    print("1..%d" % len(results))
    status = 0
    for n, (ok, name, bad) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", n, name))
        if not ok:
            status = 1
            for b in bad[:40]:
                print("# " + b)
    return status


if __name__ == "__main__":
    sys.exit(main())
