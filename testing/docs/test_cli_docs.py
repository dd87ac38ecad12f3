#!/usr/bin/env python3
"""test_cli_docs.py AOTRUN PLUGIN_ABI_MD: the CLI reference in
docs/plugin-abi.md (section 8) and `aotrun --help` must agree on
  - the commands and each command's synopsis (token for token),
  - every --option named anywhere in either text (--help itself aside),
  - the exit codes, and the --options each exit code's meaning names,
  - the limits (--calls <= N ...) and the $AOTRUN_* environment variables.
A mismatch names both sides. Prints "RESULT: N passed, N failed" (read by
testing/run_tests.sh); exit status 1 on any failure.
"""
import re
import subprocess
import sys

FLAG = re.compile(r"--[a-z][a-z-]*")
ENV = re.compile(r"\$(AOTRUN_[A-Z_]+)")


def docs_section(path):
    text = open(path, encoding="utf-8").read()
    start = text.index("## 8. The `aotrun` CLI")
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


def docs_facts(section):
    block = section.split("```")[1]  # the first fenced block: the synopsis
    synopsis = {}
    for line in block.splitlines():
        words = line.split()
        if words[:1] == ["aotrun"] and len(words) > 1:
            synopsis[words[1]] = words[2:]
    codes = {int(m.group(1)): m.group(2)
             for m in re.finditer(r"^\| (\d+) \| (.+) \|$", section, re.M)}
    limits = {m.group(1): int(m.group(2).replace(",", ""))
              for m in re.finditer(r"`(--[a-z-]+)` at most ([\d,]+)",
                                   section)}
    return synopsis, codes, limits


def help_facts(text):
    synopsis, codes, limits = {}, {}, {}
    part = None
    current = None
    for line in text.splitlines():
        if line in ("commands:", "exit codes:"):
            part, current = line, None
            continue
        if not line.strip():
            part = None
            continue
        if part == "commands:":
            m = re.match(r"^  ([a-z]+)(.*)$", line)
            if m:  # "  run PROGRAM [--method M] ..."
                current = m.group(1)
                synopsis[current] = m.group(2).split()
            elif current and line.strip().startswith("["):
                synopsis[current] += line.split()  # a continuation line
            else:
                current = None  # the command's description
        elif part == "exit codes:":
            m = re.match(r"^  (\d+)  (.*)$", line)
            if m:
                current = int(m.group(1))
                codes[current] = m.group(2)
            elif current is not None:
                codes[current] += " " + line.strip()
    for m in re.finditer(r"(--[a-z-]+) <= (\d+)", text):
        limits[m.group(1)] = int(m.group(2))
    return synopsis, codes, limits


def main(argv):
    aotrun, doc_path = argv[1], argv[2]
    run = subprocess.run([aotrun, "--help"], capture_output=True, text=True)
    checks, failures = 0, 0

    def check(ok, what, docs, help_):
        nonlocal checks, failures
        checks += 1
        if not ok:
            failures += 1
            print("FAIL: %s\n  docs/plugin-abi.md: %s\n  aotrun --help:      %s"
                  % (what, docs, help_))

    check(run.returncode == 0, "aotrun --help exit status", 0, run.returncode)
    section = docs_section(doc_path)
    d_syn, d_codes, d_limits = docs_facts(section)
    h_syn, h_codes, h_limits = help_facts(run.stdout)

    check(len(d_syn) > 0 and len(d_codes) > 0, "docs parsed", d_syn, d_codes)
    check(len(h_syn) > 0 and len(h_codes) > 0, "help parsed", h_syn, h_codes)
    check(sorted(d_syn) == sorted(h_syn), "commands", sorted(d_syn),
          sorted(h_syn))
    for cmd in sorted(set(d_syn) & set(h_syn)):
        check(d_syn[cmd] == h_syn[cmd], "synopsis of '%s'" % cmd,
              " ".join(d_syn[cmd]), " ".join(h_syn[cmd]))
    d_flags = set(FLAG.findall(section)) - {"--help"}
    h_flags = set(FLAG.findall(run.stdout)) - {"--help"}
    check(d_flags == h_flags, "options named (only in one side shown)",
          sorted(d_flags - h_flags), sorted(h_flags - d_flags))
    check(sorted(d_codes) == sorted(h_codes), "exit codes", sorted(d_codes),
          sorted(h_codes))
    for code in sorted(set(d_codes) & set(h_codes)):
        d_named = set(FLAG.findall(d_codes[code]))
        h_named = set(FLAG.findall(h_codes[code]))
        check(d_named == h_named, "options in exit code %d's meaning" % code,
              d_codes[code], h_codes[code])
    check(len(h_limits) > 0 and d_limits == h_limits, "limits", d_limits,
          h_limits)
    d_env, h_env = set(ENV.findall(section)), set(ENV.findall(run.stdout))
    check(len(h_env) > 0 and d_env == h_env, "environment variables",
          sorted(d_env), sorted(h_env))

    print("RESULT: %d passed, %d failed" % (checks - failures, failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
