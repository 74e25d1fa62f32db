#!/usr/bin/env bash
# docs/CONTRACT.md's flag lists against the binaries' --helpfull: in "Flags of xlmr_finetune"
# and "Flags of xlmr_predict", every flag the binary defines under recipes/ is named, every
# flag named is one of the binary's, and the default in brackets after a flag is the default
# the binary has. So the contract cannot drift from the code (the defaults themselves have one
# home: train::TrainerOptions, whose values recipes/finetune_flags.cc gives its flags).
#
# How a default is read: `--name` [DEFAULT; more] (or `--a`, `--b` and `--c` [DEFAULT], one
# bracket for the group). DEFAULT is the bracket's text up to the first ; , ] | : or =, or a
# backticked text that opens the bracket, whole (`--a` [`x,y`; more] has the default x,y). It
# must equal the binary's default: as a number where both are numbers (2e-5 is
# 2.0000000000000002e-05), else as text. An empty default (a flag left unset) is written as
# `none`, `unset`, a path or a description of more than one word (what the run does instead),
# or the flag is followed by a parenthesis instead of a bracket (a required flag).
#
# Catches: a default changed in the code and not in the contract, or the reverse (e.g.
# [2e-5] for --learning_rate becoming [3e-5]: tools/plant_bugs.sh contract_default_wrong); a
# flag added without a line in the contract; a flag the contract names that no longer exists.
# Args: xlmr_finetune, xlmr_predict, docs/CONTRACT.md.
set -uo pipefail
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
finetune=$(absolute "$1")
predict=$(absolute "$2")
contract=$(absolute "$3")
cd "$TEST_TMPDIR" || exit 1
"$finetune" --helpfull > finetune_help.txt 2>&1 || { echo "FAILED: xlmr_finetune --helpfull"; exit 1; }
"$predict" --helpfull > predict_help.txt 2>&1 || { echo "FAILED: xlmr_predict --helpfull"; exit 1; }
python3 - "$contract" finetune_help.txt predict_help.txt <<'PY'
import re
import sys

contract_path, finetune_help, predict_help = sys.argv[1:4]


def helpfull_defaults(path):
    """{flag: default as printed, quotes removed} of the flags defined in recipes/ files."""
    flags, source, current = {}, None, None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        group = re.match(r"^  Flags from (\S+):$", line)
        if group:
            source, current = group.group(1), None
            continue
        entry = re.match(r"^    --(\w+) \(", line)
        if entry:
            current = entry.group(1) if source.startswith("recipes/") else None
            if current:
                flags[current] = None
        if current:
            default = re.search(r".*default: (.*);$", line)  # the last: help texts may say "default:" too
            if default:
                value = default.group(1)
                flags[current] = value[1:-1] if value.startswith('"') and value.endswith('"') else value
    return flags


def section(text, heading):
    start = text.index(heading)
    end = text.find("\n## ", start + 1)
    return text[start:end if end >= 0 else len(text)]


MENTION = re.compile(r"`--(\w+)(?:=[^`]*)?`")


def documented_defaults(text):
    """{flag: (first clause of its bracket | '(' for a parenthesis | None)} in mention order."""
    text = re.sub(r"\s+", " ", text)
    mentions = [(m.group(1), m.end()) for m in MENTION.finditer(text)]
    documented = {}
    for i, (name, end) in enumerate(mentions):
        rest = text[end:]
        # A group `--a`, `--b` and `--c` [...]: each takes the bracket after the last.
        j = i
        while True:
            joined = re.match(r"\s*(?:,|and|, and)\s*`--\w+", text[mentions[j][1]:])
            if not joined or j + 1 >= len(mentions):
                break
            j += 1
        rest = text[mentions[j][1]:]
        quoted = re.match(r"\s*\[`([^`]*)`", rest)
        bracket = quoted or re.match(r"\s*\[([^;,\]|:=]*)", rest)
        value = bracket.group(1).replace("`", "").strip() if bracket else ("(" if re.match(r"\s*\(", rest) else None)
        if documented.get(name) is None:
            documented[name] = value
    return documented


def as_number(text):
    try:
        return float(text)
    except ValueError:
        return None


def default_matches(documented, actual):
    if actual == "":
        if documented == "(":
            return True
        if as_number(documented) is not None or documented in ("true", "false"):
            return False
        return documented in ("none", "unset") or "/" in documented or " " in documented
    if as_number(documented) is not None and as_number(actual) is not None:
        return as_number(documented) == as_number(actual)
    return documented == actual


failures = []
contract = open(contract_path, encoding="utf-8").read()
for binary, heading, help_path in (("xlmr_finetune", "## Flags of xlmr_finetune", finetune_help),
                                   ("xlmr_predict", "## Flags of xlmr_predict", predict_help)):
    actual = helpfull_defaults(help_path)
    if len(actual) < 10:
        failures.append(f"{binary} --helpfull: only {len(actual)} flags from recipes/ read")
    documented = documented_defaults(section(contract, heading))
    for name in sorted(set(actual) - set(documented)):
        failures.append(f'{binary}: --{name} is not named in "{heading[3:]}"')
    for name in sorted(set(documented) - set(actual)):
        failures.append(f'"{heading[3:]}" names --{name}, which {binary} does not define')
    for name in sorted(set(actual) & set(documented)):
        if actual[name] is None:
            failures.append(f"{binary} --helpfull: no default read for --{name}")
        elif documented[name] is None:
            failures.append(f'"{heading[3:]}": --{name} has no [default] (the binary\'s: "{actual[name]}")')
        elif not default_matches(documented[name], actual[name]):
            failures.append(f'"{heading[3:]}": --{name} [{documented[name]}], but {binary}\'s default is "{actual[name]}"')
for failure in failures:
    print("FAILED:", failure)
print(f"{len(failures)} failures")
sys.exit(1 if failures else 0)
PY
