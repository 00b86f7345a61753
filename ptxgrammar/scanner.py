"""The fast path's statement scanner: cuts PTX text into statement chunks.

A chunk is the trivia before a statement plus the statement, ending exactly at
the statement's last token. The scanner only has to cut where the grammar has a
statement boundary; each chunk is then parsed by the grammar (or by a builder
made from an earlier chunk of the same shape). Where it is unsure it does not
match, and the caller falls back to parsing the whole file with the grammar.

Contexts: module level, function body, `.section` body.
"""

from __future__ import annotations

import re

MODULE, BODY, SECTION = "m", "b", "s"

_COMMENT = r"//[^\n\r]*+|/\*(?:[^*]++|\*(?!/))*+\*/"
TRIVIA = rf"(?:[ \t\r\n\f]++|{_COMMENT}|\#[^\n\r]*+)*+"
_STRING = r'"[^"]*+"'
_BRACED = r"\{(?:[^{}\"]++|" + _STRING + r"|\{(?:[^{}\"]++|" + _STRING + r"|\{[^{}]*+\})*+\})*+\}"
_INITIALIZER = rf"=(?:[^;{{}}\"/]++|{_STRING}|{_COMMENT}|/|{_BRACED})*+"

# Module level: items up to `;` (variables, prototypes), `{` (a function or
# section body opens) or the end of the file (`.file` lines, trailing trivia).
MODULE_CHUNK = re.compile(
    rf"{TRIVIA}(?P<body>(?:[^;{{}}\"/=]++|{_STRING}|{_COMMENT}|/|{_INITIALIZER})*+(?:;|\{{|\Z))"
)

_LABEL = r"[A-Za-z_$%][A-Za-z0-9_$]*+[ \t]*+:(?!:)"
# Inside `.loc` any trivia may separate the words (the grammar allows it; a statement
# never starts with `,`, so the optional inlined-at part cannot be misread).
_SEP = rf"(?:[ \t\r\n\f]|{_COMMENT})"
_LOC = (rf"\.loc{_SEP}++\d++{_SEP}++\d++{_SEP}++\d++"
        rf"(?:{_SEP}*+,{_SEP}*+function_name{_SEP}++[A-Za-z0-9_$]++(?:{_SEP}*+\+{_SEP}*+\d++)?"
        rf"{_SEP}*+,{_SEP}*+inlined_at{_SEP}++\d++{_SEP}++\d++{_SEP}++\d++)?(?![\w$])")
_STATEMENT = rf"(?:[^;{{}}\"/]++|{_STRING}|{_COMMENT}|/|\{{[^{{}};]*+\}})*+;"

# Function bodies: a brace, a label, a `.loc`, or a statement ending in `;`.
BODY_CHUNK = re.compile(rf"{TRIVIA}(?P<body>\{{|\}}|{_LOC}|{_LABEL}|{_STATEMENT})")

# `.section` bodies: labels and data lines (`.b8 1,2,3`), which have no terminator.
_DATA = r"\.[A-Za-z0-9_]++(?:[ \t]*+(?:[^\s,/{}]++|,|/(?![/*])))*+"
SECTION_CHUNK = re.compile(rf"{TRIVIA}(?P<body>\}}|{_LABEL}|{_DATA})")

PATTERNS = {MODULE: MODULE_CHUNK, BODY: BODY_CHUNK, SECTION: SECTION_CHUNK}

# A run of one-number data lines of one width, each on a line of its own (`\n.b8 144`):
# two thirds of the statements of a `-G` file's debug sections. Each line is exactly
# one SECTION_CHUNK (trivia `\n`, the data up to the line end), and all of them have
# one shape (the width and the number are its holes): parser.parse_fast builds a run
# with that shape's builder, without a scanner match per line.
DATA_RUN = re.compile(r"\n\.b([0-9]+) [0-9]+(?=\n)(?:\n\.b\1 [0-9]+(?=\n))*+")
DATA_RUN_SAMPLE = "\n.b8 0"        # one line of a run: its shape is every line's
